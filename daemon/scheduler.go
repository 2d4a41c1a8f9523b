package daemon

import (
	"context"
	"fmt"
	"log/slog"
	"runtime/debug"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/robfig/cron/v3"

	"github.com/supersessiond/supersessiond/config"
	"github.com/supersessiond/supersessiond/internal/store"
)

// scheduler runs the scheduled jobs with robfig/cron. On a reload that
// changes schedules or the time zone it builds a new cron and stops the old
// one; a job still running under the old cron keeps its per-job guard, so
// the new cron cannot start it a second time meanwhile.
type scheduler struct {
	ctx  context.Context
	d    *Daemon
	jobs []Job

	mu      sync.Mutex
	cron    *cron.Cron
	specs   map[string]string // job → spec in force
	loc     *time.Location
	running map[string]*atomic.Bool
	retired []context.Context // done when an old cron's running jobs end
}

func newScheduler(ctx context.Context, d *Daemon, jobs []Job) *scheduler {
	s := &scheduler{ctx: ctx, d: d, jobs: jobs, running: map[string]*atomic.Bool{}}
	for _, j := range jobs {
		s.running[j.Name()] = &atomic.Bool{}
		d.metrics.AddJob(j.Name())
	}
	return s
}

// cronLogger adapts slog to cron.Logger. cron's own info lines (wake, run,
// schedule) are debug-level noise for an operator.
type cronLogger struct{ log *slog.Logger }

func (l cronLogger) Info(msg string, kv ...any) { l.log.Debug("cron: "+msg, kv...) }
func (l cronLogger) Error(err error, msg string, kv ...any) {
	l.log.Error("cron: "+msg, append(kv, "err", err)...)
}

// plan is a schedule built from a configuration and not yet in force:
// everything that can fail (parsing, installing) has happened, so committing
// it cannot.
type plan struct {
	cron  *cron.Cron // nil: the schedules in force are unchanged
	specs map[string]string
	loc   *time.Location
	gaps  map[string]time.Duration
}

// prepare builds the cron cfg asks for, complete and stopped.
func (s *scheduler) prepare(cfg *config.Config) (*plan, error) {
	p := &plan{specs: map[string]string{}, loc: cfg.Location(), gaps: map[string]time.Duration{}}
	for _, j := range s.jobs {
		p.specs[j.Name()] = j.Schedule(cfg)
	}
	s.mu.Lock()
	unchanged := s.cron != nil && equalSpecs(p.specs, s.specs) && s.loc.String() == p.loc.String()
	s.mu.Unlock()
	if unchanged {
		return p, nil
	}
	// Specs are parsed by config.ParseSchedule, the parser validation used,
	// and handed over as schedules: no second parser to drift. No chain: the
	// scheduler's own guard (which survives a reschedule) keeps a job from
	// overlapping itself, and the lease holder recovers a panicking run.
	c := cron.New(cron.WithLocation(p.loc), cron.WithLogger(cronLogger{s.d.log}))
	for _, j := range s.jobs {
		spec := p.specs[j.Name()]
		p.gaps[j.Name()] = 0
		if spec == config.ScheduleOff {
			continue
		}
		sched, err := config.ParseSchedule(spec)
		if err != nil {
			return nil, fmt.Errorf("schedule %s: %w", j.Name(), err)
		}
		c.Schedule(sched, cron.FuncJob(func() { s.execute(j, sched) }))
		p.gaps[j.Name()] = longestGap(sched, time.Now().In(p.loc))
	}
	p.cron = c
	return p, nil
}

// commit puts a prepared schedule in force: the new cron starts, the old
// one stops taking ticks and its running jobs finish.
func (s *scheduler) commit(p *plan) {
	if p.cron == nil {
		return
	}
	for name, gap := range p.gaps {
		s.d.metrics.JobInterval.WithLabelValues(name).Set(gap.Seconds())
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	old := s.cron
	s.cron, s.specs, s.loc = p.cron, p.specs, p.loc
	p.cron.Start()
	live := s.retired[:0]
	for _, w := range s.retired {
		if w.Err() == nil {
			live = append(live, w)
		}
	}
	s.retired = live
	if old != nil {
		s.retired = append(s.retired, old.Stop()) // its running jobs finish
		s.d.log.Info("schedules changed", "jobs", s.describeLocked())
	}
}

// longestGap is the longest gap between the schedule's next runs, what an
// alert means by "several intervals" without a success. Eight runs include a
// weekend for a schedule that runs on weekdays only.
func longestGap(sched cron.Schedule, from time.Time) time.Duration {
	var longest time.Duration
	t := sched.Next(from)
	for range 8 {
		next := sched.Next(t)
		if next.IsZero() || t.IsZero() {
			break
		}
		longest = max(longest, next.Sub(t))
		t = next
	}
	return longest
}

func equalSpecs(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

func (s *scheduler) describe() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.describeLocked()
}

func (s *scheduler) describeLocked() string {
	var parts []string
	for name, spec := range s.specs {
		parts = append(parts, fmt.Sprintf("%s=%q", name, spec))
	}
	sort.Strings(parts)
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, " ") + " (" + s.loc.String() + ")"
}

// tickOf is the schedule time a run belongs to, the same on every replica:
// cron fires on minute boundaries (ticks of a 5-field spec), and @every
// intervals are aligned to the wall clock so replicas started at different
// times still agree.
func tickOf(sched cron.Schedule, now time.Time) time.Time {
	if cd, ok := sched.(cron.ConstantDelaySchedule); ok {
		return now.Truncate(cd.Delay)
	}
	return now.Truncate(time.Minute)
}

// execute is one scheduled run: guard against overlap, take the lease for
// this tick, run with the lease held, record metrics and log.
func (s *scheduler) execute(j Job, sched cron.Schedule) {
	name := j.Name()
	m := s.d.metrics
	guard := s.running[name]
	if !guard.CompareAndSwap(false, true) {
		m.JobRuns.WithLabelValues(name, "skipped").Inc()
		s.d.log.Warn("job skipped: previous run still going", "job", name)
		return
	}
	defer guard.Store(false)
	if s.ctx.Err() != nil {
		return
	}
	if free, ok := s.room(); !ok {
		m.JobRuns.WithLabelValues(name, "skipped").Inc()
		s.d.guard.Skipped(name)
		s.d.log.Warn("job skipped this tick: the database is nearly out of connection slots, and they are left to the agent",
			"job", name, "free_slots", free, "min_free_slots", s.d.opts.MinFreeConnections)
		return
	}
	tick := tickOf(sched, time.Now())
	l, err := s.d.leases.Acquire(s.ctx, name, tick)
	if err != nil {
		m.JobRuns.WithLabelValues(name, "error").Inc()
		m.JobErrors.WithLabelValues(name).Inc()
		s.d.log.Error("job not run: cannot take its lease", "job", name, "tick", tick, "err", err)
		return
	}
	if l == nil {
		m.JobRuns.WithLabelValues(name, "skipped").Inc()
		s.d.log.Debug("job skipped: another replica runs this tick", "job", name, "tick", tick)
		return
	}
	cfg := s.d.Config()
	start := time.Now()
	var report any
	err = l.Hold(s.ctx, func(ctx context.Context) (err error) {
		defer func() {
			if r := recover(); r != nil {
				err = fmt.Errorf("panic: %v", r)
				s.d.log.Error("job panicked", "job", name, "panic", r, "stack", string(debug.Stack()))
			}
		}()
		report, err = j.Run(ctx, cfg)
		return err
	})
	elapsed := time.Since(start)
	m.JobDuration.WithLabelValues(name).Observe(elapsed.Seconds())
	if store.IsTooManyConnections(err) {
		m.JobRuns.WithLabelValues(name, "skipped").Inc()
		s.d.log.Warn("job stopped this tick: the database refused a connection (too many clients); it resumes at the next tick",
			"job", name, "tick", tick, "err", err)
		return
	}
	if err != nil {
		m.JobRuns.WithLabelValues(name, "error").Inc()
		m.JobErrors.WithLabelValues(name).Inc()
		s.d.log.Error("job failed", "job", name, "tick", tick, "term", l.Term(), "duration", elapsed.String(), "err", err, "report", report)
		return
	}
	m.JobRuns.WithLabelValues(name, "ok").Inc()
	m.JobLastSuccess.WithLabelValues(name).SetToCurrentTime()
	s.d.log.Info("job done", "job", name, "tick", tick, "term", l.Term(), "duration", elapsed.String(), "report", report)
}

// room asks the guard, before a run, whether the server keeps at least
// MinFreeConnections slots free for ordinary roles once this daemon's pool
// is full: a crowded server's last slots are the agent's, and the run waits
// for the next tick.
func (s *scheduler) room() (free int, ok bool) {
	ctx, cancel := context.WithTimeout(s.ctx, 5*time.Second)
	defer cancel()
	return s.d.guard.Room(ctx, 0)
}

// stop stops scheduling; the channel closes when running jobs are done.
func (s *scheduler) stop() <-chan struct{} {
	s.mu.Lock()
	waits := append([]context.Context(nil), s.retired...)
	if s.cron != nil {
		waits = append(waits, s.cron.Stop())
	}
	s.mu.Unlock()
	done := make(chan struct{})
	go func() {
		for _, w := range waits {
			<-w.Done()
		}
		close(done)
	}()
	return done
}
