package daemon

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/supersessiond/supersessiond/config"
)

// services starts and stops the long-running services as reloads enable and
// disable them. A service that returns an error is restarted after a pause:
// it must never take the daemon down.
type services struct {
	ctx  context.Context
	d    *Daemon
	list []Service

	mu      sync.Mutex
	running map[string]*runningService
	wg      sync.WaitGroup
}

type runningService struct {
	cancel context.CancelFunc
	done   chan struct{}
}

func newServices(ctx context.Context, d *Daemon, list []Service) *services {
	return &services{ctx: ctx, d: d, list: list, running: map[string]*runningService{}}
}

func (s *services) apply(cfg *config.Config) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, svc := range s.list {
		name := svc.Name()
		r, on := s.running[name]
		want := svc.Enabled(cfg)
		switch {
		case want && !on:
			ctx, cancel := context.WithCancel(s.ctx)
			r = &runningService{cancel: cancel, done: make(chan struct{})}
			s.running[name] = r
			s.wg.Add(1)
			go s.supervise(ctx, svc, r)
			s.d.log.Info("service started", "service", name)
		case !want && on:
			r.cancel()
			delete(s.running, name)
			s.d.log.Info("service stopped by configuration", "service", name)
		}
	}
}

func (s *services) supervise(ctx context.Context, svc Service, r *runningService) {
	defer s.wg.Done()
	defer close(r.done)
	backoff := time.Second
	for ctx.Err() == nil {
		err := func() (err error) {
			defer func() {
				if p := recover(); p != nil {
					err = fmt.Errorf("panic: %v", p)
				}
			}()
			return svc.Run(ctx, s.d.Config)
		}()
		if ctx.Err() != nil {
			return
		}
		s.d.log.Error("service stopped unexpectedly; restarting", "service", svc.Name(), "err", err, "retry_in", backoff.String())
		select {
		case <-ctx.Done():
			return
		case <-time.After(backoff):
		}
		backoff = min(backoff*2, time.Minute)
	}
}

// ready returns the first unready running service's problem.
func (s *services) ready() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, svc := range s.list {
		if _, on := s.running[svc.Name()]; !on {
			continue
		}
		if err := svc.Ready(); err != nil {
			return fmt.Errorf("%s: %w", svc.Name(), err)
		}
	}
	return nil
}

// stop cancels every service; the channel closes when all have returned.
func (s *services) stop() <-chan struct{} {
	s.mu.Lock()
	for name, r := range s.running {
		r.cancel()
		delete(s.running, name)
	}
	s.mu.Unlock()
	done := make(chan struct{})
	go func() { s.wg.Wait(); close(done) }()
	return done
}
