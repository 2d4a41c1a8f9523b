package config

import (
	"context"
	"sync"
	"time"
)

// Follower keeps a configuration current with the file it was loaded from,
// for a process that runs a pass or two and needs no more of the daemon's
// reload than this: one-shot commands (sweep, compact, reconcile --once)
// obey the brake (shadowMode, mutationsFrozen) as it changes, as the
// daemon's jobs do.
//
// Like the daemon, it watches the file (Watch) and, in case a watch misses a
// change (a link chain it could not follow, a network file system), it
// compares the file's digest when asked, at most once a second. A change is
// loaded whole and validated; one that fails keeps the previous
// configuration in force and is reported once.
type Follower struct {
	src    Source
	report func(next *Config, err error)

	mu      sync.Mutex
	cur     *Config
	running string // digest of the file cur was read from
	tried   string // digest of the file the last load read
	checked time.Time
}

// followCheck is how often Current compares the file's digest.
const followCheck = time.Second

// Follow starts following initial's file: until ctx ends, a change of it is
// loaded and, when valid, put in force; report (when set) is told of every
// load, with the configuration now in force or the error that kept the
// previous one. With no file (built-in defaults) there is nothing to follow.
// An error means the file cannot be watched: changes are then seen only
// when Current is asked.
func Follow(ctx context.Context, src Source, initial *Loaded, report func(next *Config, err error)) (*Follower, error) {
	f := &Follower{src: src, report: report, cur: initial.Config, running: initial.Digest, tried: initial.Digest, checked: time.Now()}
	if initial.File == "" {
		return f, nil
	}
	return f, Watch(ctx, initial.File, 300*time.Millisecond, f.reload)
}

// Current is the configuration in force now.
func (f *Follower) Current() *Config {
	f.mu.Lock()
	due := f.src.Path != "" && time.Since(f.checked) >= followCheck
	f.mu.Unlock()
	if due {
		f.reload()
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.cur
}

// reload loads the file again when its digest is neither the one in force
// nor the one a load already refused.
func (f *Follower) reload() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.checked = time.Now()
	now, err := FileDigest(f.src.Path)
	if err == nil && (now == f.running || now == f.tried) {
		return
	}
	loaded, err := Load(f.src)
	if err != nil {
		f.tried = now
		if f.report != nil {
			f.report(f.cur, err)
		}
		return
	}
	f.cur, f.running, f.tried = loaded.Config, loaded.Digest, loaded.Digest
	if f.report != nil {
		f.report(f.cur, nil)
	}
}
