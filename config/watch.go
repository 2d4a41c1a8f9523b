package config

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/fsnotify/fsnotify"
)

// Watch calls onChange, debounced, whenever the file at path may have changed,
// until ctx is done.
//
// It watches directories, not files: editors that save by writing a new file
// and renaming it over the old one (vim, sed -i) replace the inode, and a
// watch on the old inode would go silent after the first save. When path is a
// symbolic link (the agent's own agent.yaml linked into /etc/supersessiond,
// a Kubernetes ConfigMap's ..data swap), the directory of every link in the
// chain and of the final target is watched, because an edit of the target
// makes no event beside the link. After every change the chain is resolved
// again and the watches follow it, so re-pointing a link is noticed too.
func Watch(ctx context.Context, path string, debounce time.Duration, onChange func()) error {
	w, err := fsnotify.NewWatcher()
	if err != nil {
		return fmt.Errorf("config: watch %s: %w", path, err)
	}
	t := &tracker{w: w, path: path}
	if err := t.follow(); err != nil {
		_ = w.Close()
		return err
	}
	go t.loop(ctx, debounce, onChange)
	return nil
}

// tracker keeps the watches on the directories of path's symlink chain.
type tracker struct {
	w     *fsnotify.Watcher
	path  string
	dirs  []string            // watched directories
	names map[string][]string // directory → names in it that matter
}

// follow resolves the chain and moves the watches onto its directories.
func (t *tracker) follow() error {
	chain := linkChain(t.path)
	names := map[string][]string{}
	for _, p := range chain {
		dir, base := filepath.Split(p)
		dir = filepath.Clean(dir)
		names[dir] = append(names[dir], base)
	}
	var dirs []string
	for dir := range names {
		dirs = append(dirs, dir)
		if !slices.Contains(t.dirs, dir) {
			if err := t.w.Add(dir); err != nil {
				if len(t.dirs) == 0 && dir == filepath.Clean(filepath.Dir(chain[0])) {
					return fmt.Errorf("config: watch directory %s: %w", dir, err)
				}
				continue // a target directory that vanished: the link's own directory still tells us
			}
		}
	}
	for _, dir := range t.dirs {
		if _, keep := names[dir]; !keep {
			_ = t.w.Remove(dir)
		}
	}
	slices.Sort(dirs)
	t.dirs, t.names = dirs, names
	return nil
}

// matters reports whether an event on name concerns the configuration.
func (t *tracker) matters(name string) bool {
	dir, base := filepath.Split(name)
	for _, n := range t.names[filepath.Clean(dir)] {
		if n == base {
			return true
		}
	}
	// ..data and ..2024_... are how Kubernetes swaps a mounted ConfigMap.
	_, watched := t.names[filepath.Clean(dir)]
	return watched && strings.HasPrefix(base, "..")
}

func (t *tracker) loop(ctx context.Context, debounce time.Duration, onChange func()) {
	defer t.w.Close()
	timer := time.NewTimer(debounce)
	timer.Stop()
	arm := func() { timer.Reset(debounce) }
	for {
		select {
		case <-ctx.Done():
			timer.Stop()
			return
		case ev, ok := <-t.w.Events:
			if !ok {
				return
			}
			if t.matters(ev.Name) {
				arm()
			}
		case <-timer.C:
			_ = t.follow() // the link may point elsewhere now
			onChange()
		case _, ok := <-t.w.Errors:
			if !ok {
				return
			}
			arm() // an overflow means events were dropped: reload to be sure
		}
	}
}

// linkChain is path, then each target its symbolic links lead to, ending
// with the file itself, all absolute. Links in parent directories are
// resolved too, so the final entry is where the bytes live.
func linkChain(path string) []string {
	p, err := filepath.Abs(path)
	if err != nil {
		p = path
	}
	chain := []string{filepath.Clean(p)}
	for range 40 { // the kernel's own limit on link depth
		fi, err := os.Lstat(p)
		if err != nil || fi.Mode()&os.ModeSymlink == 0 {
			break
		}
		target, err := os.Readlink(p)
		if err != nil {
			break
		}
		if !filepath.IsAbs(target) {
			target = filepath.Join(filepath.Dir(p), target)
		}
		p = filepath.Clean(target)
		chain = append(chain, p)
	}
	if real, err := filepath.EvalSymlinks(path); err == nil && !slices.Contains(chain, real) {
		chain = append(chain, real)
	}
	return chain
}
