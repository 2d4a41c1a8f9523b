package console

import (
	"context"
	"sync"
	"time"
)

// Guessing a token costs time, per client: after maxGuesses wrong tokens
// (bearer or login) within guessWindow a client is locked out, for
// guessWindow the first time and twice as long each time again (up to
// maxLockout). Other clients are not affected; a right token clears the
// client's count.
const (
	maxGuesses  = 10
	guessWindow = time.Minute
	maxLockout  = time.Hour
	// maxClients bounds the clients remembered: when full, those whose
	// window and lockout are over are forgotten first, then the oldest.
	maxClients = 10000
)

type guessState struct {
	failures    int
	windowStart time.Time
	lockedUntil time.Time
	strikes     int // lockouts so far: each doubles the next
}

// guessLimiter counts wrong tokens per client.
type guessLimiter struct {
	mu sync.Mutex
	m  map[string]*guessState
}

func newGuessLimiter() *guessLimiter { return &guessLimiter{m: map[string]*guessState{}} }

// locked is how long client must still wait (0: it may try).
func (g *guessLimiter) locked(client string, now time.Time) time.Duration {
	g.mu.Lock()
	defer g.mu.Unlock()
	if s := g.m[client]; s != nil && now.Before(s.lockedUntil) {
		return s.lockedUntil.Sub(now)
	}
	return 0
}

// fail counts a wrong token; it returns the lockout that starts now, if
// this was one too many.
func (g *guessLimiter) fail(client string, now time.Time) time.Duration {
	g.mu.Lock()
	defer g.mu.Unlock()
	s := g.m[client]
	if s == nil {
		g.makeRoom(now)
		s = &guessState{windowStart: now}
		g.m[client] = s
	}
	if now.Sub(s.windowStart) > guessWindow {
		s.failures, s.windowStart = 0, now
	}
	s.failures++
	if s.failures < maxGuesses {
		return 0
	}
	lock := min(guessWindow<<s.strikes, maxLockout)
	s.strikes++
	s.failures, s.windowStart, s.lockedUntil = 0, now, now.Add(lock)
	return lock
}

func (g *guessLimiter) succeed(client string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	delete(g.m, client)
}

// makeRoom forgets clients when the map is full; g.mu is held.
func (g *guessLimiter) makeRoom(now time.Time) {
	if len(g.m) < maxClients {
		return
	}
	var oldest string
	for k, s := range g.m {
		if now.After(s.lockedUntil) && now.Sub(s.windowStart) > guessWindow && s.strikes == 0 {
			delete(g.m, k)
			continue
		}
		if oldest == "" || s.windowStart.Before(g.m[oldest].windowStart) {
			oldest = k
		}
	}
	if len(g.m) >= maxClients {
		delete(g.m, oldest)
	}
}

// gate bounds the console's requests in flight: readers must never crowd
// out the daemon. A request waits up to the gate's wait for a place, then
// is turned away (503 with Retry-After).
type gate struct {
	slots chan struct{}
	wait  time.Duration
}

func newGate(n int, wait time.Duration) *gate {
	return &gate{slots: make(chan struct{}, n), wait: wait}
}

// enter takes a place; false when none came free in time (or ctx ended).
func (g *gate) enter(ctx context.Context) bool {
	select {
	case g.slots <- struct{}{}:
		return true
	default:
	}
	t := time.NewTimer(g.wait)
	defer t.Stop()
	select {
	case g.slots <- struct{}{}:
		return true
	case <-t.C:
		return false
	case <-ctx.Done():
		return false
	}
}

func (g *gate) leave() { <-g.slots }
