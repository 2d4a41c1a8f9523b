package config

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/fsnotify/fsnotify"
)

// Watch calls onChange, debounced, whenever the file at path may have changed,
// until ctx is done. It watches the parent directory rather than the file:
// editors that save by writing a new file and renaming it over the old one
// (vim, sed -i, Kubernetes ConfigMap symlink swaps) replace the inode, and a
// watch on the old inode would go silent after the first save.
func Watch(ctx context.Context, path string, debounce time.Duration, onChange func()) error {
	w, err := fsnotify.NewWatcher()
	if err != nil {
		return fmt.Errorf("config: watch %s: %w", path, err)
	}
	dir, base := filepath.Split(filepath.Clean(path))
	if dir == "" {
		dir = "."
	}
	if err := w.Add(dir); err != nil {
		_ = w.Close()
		return fmt.Errorf("config: watch directory %s: %w", dir, err)
	}
	go func() {
		defer w.Close()
		var timer *time.Timer
		var fire <-chan time.Time
		for {
			select {
			case <-ctx.Done():
				if timer != nil {
					timer.Stop()
				}
				return
			case ev, ok := <-w.Events:
				if !ok {
					return
				}
				name := filepath.Base(ev.Name)
				// ..data is how Kubernetes swaps a mounted ConfigMap.
				if name != base && !strings.HasPrefix(name, "..") {
					continue
				}
				if timer == nil {
					timer = time.NewTimer(debounce)
				} else {
					timer.Reset(debounce)
				}
				fire = timer.C
			case <-fire:
				fire = nil
				onChange()
			case _, ok := <-w.Errors:
				if !ok {
					return
				}
				// An overflow means events were dropped: reload to be sure.
				if timer == nil {
					timer = time.NewTimer(debounce)
				} else {
					timer.Reset(debounce)
				}
				fire = timer.C
			}
		}
	}()
	return nil
}
