package inline

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net"
	"sync/atomic"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/supersessiond/supersessiond/internal/ident"
	"github.com/supersessiond/supersessiond/internal/redact"
	"github.com/supersessiond/supersessiond/internal/schema"
	"github.com/supersessiond/supersessiond/internal/store"
	"github.com/supersessiond/supersessiond/internal/supersession"
	"github.com/supersessiond/supersessiond/jobs"
)

// Name is the service's name.
const Name = "inline"

// Channel is the NOTIFY channel the classification trigger signals.
const Channel = "supersessiond_classified"

const (
	batchSize   = 200
	maxAttempts = 5
)

// Hook is the inline post-classify hook service.
type Hook struct {
	db      *sqlx.DB
	sql     statements
	log     *slog.Logger
	engine  *supersession.Engine
	feed    *supersession.Feed // the change records, as this process reads them
	metrics *Metrics
	holder  string
	guard   *store.Guard // waited on before each batch; asked before the LISTEN connection is opened

	connected atomic.Bool
	listening atomic.Bool // LISTEN took effect: a notification now wakes us
	lastErr   atomic.Pointer[string]
	// drainErr is the last drain's failure, "" after a successful one: a
	// hook that keeps failing is not ready, whatever its listener says.
	drainErr atomic.Pointer[string]
	// current returns the settings in force (set by Run): each batch
	// decides under the newest, and asks them again before writing.
	current func() Settings

	// ObserveLag, when set before Run, receives every lag the histogram
	// does (the bench command computes exact percentiles from it).
	ObserveLag func(seconds float64)
	examined   func(agent, aspect string) // OnExamine
	// ClaimFor is how long a claim on outbox rows lasts unless renewed
	// (default 60s): a daemon that dies mid-batch loses its claims within it.
	ClaimFor time.Duration
}

// Metrics are the hook's own.
type Metrics struct {
	Lag       prometheus.Histogram
	Processed *prometheus.CounterVec // result: decided | gone | given_up
	Backlog   prometheus.Gauge
	Reconnect prometheus.Counter
	Failed    *prometheus.CounterVec // kind: transient | other
}

// newMetrics registers the hook's metrics on reg (nil: not exported).
func newMetrics(reg prometheus.Registerer) *Metrics {
	m := &Metrics{
		Lag: prometheus.NewHistogram(prometheus.HistogramOpts{
			Namespace: "supersessiond", Name: "inline_lag_seconds",
			Help:    "Time from an attribute's classification to the commit of its supersession decision.",
			Buckets: []float64{.005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60, 300},
		}),
		Processed: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: "supersessiond", Name: "inline_classifications_total",
			Help: "Classified attributes handled by the inline hook, by result.",
		}, []string{"result"}),
		Backlog: prometheus.NewGauge(prometheus.GaugeOpts{
			Namespace: "supersessiond", Name: "inline_backlog",
			Help: "Classifications waiting in the outbox after the last drain.",
		}),
		Reconnect: prometheus.NewCounter(prometheus.CounterOpts{
			Namespace: "supersessiond", Name: "inline_listener_reconnects_total",
			Help: "Times the LISTEN connection was re-established.",
		}),
		Failed: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: "supersessiond", Name: "inline_drain_failures_total",
			Help: "Drains that failed and consumed nothing, retried after a pause, by kind: transient (the server busy, full or away) or other.",
		}, []string{"kind"}),
	}
	if reg != nil {
		reg.MustRegister(m.Lag, m.Processed, m.Backlog, m.Reconnect, m.Failed)
	}
	// Every known label value has its series at zero from the start.
	for _, result := range []string{"decided", "gone", "given_up"} {
		m.Processed.WithLabelValues(result)
	}
	for _, kind := range []string{"transient", "other"} {
		m.Failed.WithLabelValues(kind)
	}
	return m
}

// New returns the hook for the database deps describe, deciding with
// engine (the daemon shares one with the sweep).
func New(deps jobs.Deps, engine *supersession.Engine) *Hook {
	deps = deps.WithDefaults()
	engine.CountsFor(Name)
	holder := ident.Holder()
	h := &Hook{db: deps.DB, sql: schema.Render(deps.Names, hookSQL), log: deps.Logger.With("service", Name), engine: engine, feed: engine.Feed(holder),
		metrics: newMetrics(deps.Registry), ClaimFor: time.Minute, holder: holder, guard: deps.Guard}
	empty := "not started"
	h.lastErr.Store(&empty)
	none := ""
	h.drainErr.Store(&none)
	return h
}

// Metrics are the hook's metrics, for tests and the bench.
func (h *Hook) Metrics() *Metrics { return h.metrics }

func (h *Hook) Name() string { return Name }

// OnExamine, when set before Run or Drain (tests), is told each aspect a
// batch decides, after its reads and before its decisions.
func (h *Hook) OnExamine(f func(agent, aspect string)) { h.examined = f }

// Settings are what the hook runs and decides under, made once per load of
// the configuration; Run reads the ones in force before each drain.
type Settings struct {
	// Enabled: supersessionEnabled and inlineHook.enabled.
	Enabled bool
	// ListenDSN is the LISTEN connection's URL (listenUrl, else url).
	ListenDSN string
	// PollInterval is how often the outbox is drained without a wake-up.
	PollInterval time.Duration
	// Engine is what the engine decides under.
	Engine supersession.Settings
}

// Enabled: supersessionEnabled and inlineHook.enabled.
func (h *Hook) Enabled(cfg Settings) bool { return cfg.Enabled }

// Ready is nil while the LISTEN connection is up and the last drain
// succeeded.
func (h *Hook) Ready() error {
	if !h.connected.Load() {
		return fmt.Errorf("listener not connected: %s", *h.lastErr.Load())
	}
	if !h.listening.Load() {
		return fmt.Errorf("listener connected, LISTEN not in effect yet")
	}
	if msg := *h.drainErr.Load(); msg != "" {
		return fmt.Errorf("last drain failed: %s", msg)
	}
	return nil
}

// Run listens and drains until ctx ends; each drain takes the settings
// current returns then.
func (h *Hook) Run(ctx context.Context, current func() Settings) error {
	h.current = current
	cfg := current()
	listener := h.listen(cfg)
	defer func() {
		h.connected.Store(false)
		_ = listener.Close()
	}()
	// Listen waits for the connection, which may be long in coming (the
	// database down, or crowded): the channel is registered at once and
	// listened to when it connects; polling covers us meanwhile. Once it is
	// in effect the outbox is drained again: a classification committed
	// between the first drain and the LISTEN woke nobody.
	listening := make(chan struct{})
	go func() {
		err := listener.Listen(Channel)
		if err != nil && !errors.Is(err, pq.ErrChannelAlreadyOpen) {
			if !errors.Is(err, net.ErrClosed) {
				h.log.Warn("LISTEN failed; polling until the listener connects", "err", err)
			}
			return
		}
		h.listening.Store(true)
		close(listening)
	}()

	// Drains run on up to drainers goroutines: a wake-up while every one
	// is busy is remembered and starts the next free one, so nothing
	// classified meanwhile waits for a poll. After a failed drain, none
	// starts until a pause has passed (exponential, with jitter, capped):
	// a busy server is not asked again at every classification.
	poll := time.NewTimer(0) // drain at start: anything classified while we were down
	defer poll.Stop()
	p := newPause()
	defer p.timer.Stop()
	finished := make(chan error, drainers)
	running, wanted := 0, false
	for {
		select {
		case <-ctx.Done():
			for ; running > 0; running-- {
				<-finished
			}
			return nil
		case n := <-listener.Notify:
			_ = n // a nil notification (reconnect) and a real one both mean: drain
			wanted = true
		case <-listening:
			listening, wanted = nil, true
		case <-poll.C:
			wanted = true
		case <-p.timer.C:
			p.holding, wanted = false, true
		case err := <-finished:
			running--
			h.drained(ctx, err, p)
		}
		if wanted && running < drainers && !p.holding {
			wanted = false
			running++
			cfg = current()
			go func(cfg Settings) { finished <- h.Drain(ctx, cfg) }(cfg)
			poll.Reset(cfg.PollInterval)
		}
	}
}

// listen makes the LISTEN connection's listener, which keeps Ready and the
// log told of its state. The connection is opened (and reopened) only when
// the guard finds a slot to spare for it.
func (h *Hook) listen(cfg Settings) *pq.Listener {
	return pq.NewDialListener(h.guard.Dialer("listen"), store.WithApplicationName(cfg.ListenDSN), 250*time.Millisecond, 10*time.Second, func(ev pq.ListenerEventType, err error) {
		switch ev {
		case pq.ListenerEventConnected:
			h.connected.Store(true)
			h.log.Info("listening for classifications", "channel", Channel)
		case pq.ListenerEventReconnected:
			h.connected.Store(true)
			h.metrics.Reconnect.Inc()
			h.log.Info("listener reconnected; rescanning the outbox")
		case pq.ListenerEventDisconnected:
			h.connected.Store(false)
			msg := "disconnected"
			if err != nil {
				msg = "disconnected: " + redact.Text(err.Error())
			}
			h.lastErr.Store(&msg)
			h.log.Warn("listener disconnected; falling back to polling until it reconnects", "err", err)
		case pq.ListenerEventConnectionAttemptFailed:
			msg := "connection attempt failed"
			if err != nil {
				msg += ": " + redact.Text(err.Error())
			}
			h.lastErr.Store(&msg)
		}
	})
}

// drainers is how many drains run at once. While one batch waits for the
// database (its claim, its loads, its writes, its commit), another is
// analysed and decided: with one at a time, the hook's lag grew with the
// classification rate while a core sat idle (at 2,500/s, two cores 78%
// busy and a p99 lag of 441 ms). Claims keep two drains (like two
// daemons) off each other's rows; every write is guarded.
const drainers = 2

// Pauses after failed drains: the first is short, so a blip costs little;
// the longest keeps a server in trouble from being asked more than a few
// times a minute.
const (
	pauseInitial = 500 * time.Millisecond
	pauseMax     = 30 * time.Second
)

// pause holds drains back after a failed one.
type pause struct {
	timer    *time.Timer
	holding  bool
	failures int // in a row
}

func newPause() *pause {
	t := time.NewTimer(time.Hour)
	t.Stop()
	return &pause{timer: t}
}

// drained records the outcome of one drain for Ready, the log and the
// metrics, and after a failure holds the next drain back.
func (h *Hook) drained(ctx context.Context, err error, p *pause) {
	if err == nil {
		none := ""
		h.drainErr.Store(&none)
		p.failures = 0
		return
	}
	if ctx.Err() != nil {
		return
	}
	msg := time.Now().UTC().Format(time.RFC3339) + ": " + err.Error()
	h.drainErr.Store(&msg)
	p.failures++
	delay := store.Backoff(p.failures, pauseInitial, pauseMax, rand.Float64())
	p.holding = true
	p.timer.Reset(delay)
	if store.Transient(err) {
		h.metrics.Failed.WithLabelValues("transient").Inc()
		h.log.Warn("inline hook: the database refused or dropped a batch; nothing consumed, retrying after a pause",
			"err", err, "retry_in", delay.Round(time.Millisecond).String(), "failures_in_a_row", p.failures)
		return
	}
	h.metrics.Failed.WithLabelValues("other").Inc()
	h.log.Error("inline hook: drain failed; nothing consumed, retrying after a pause",
		"err", err, "retry_in", delay.Round(time.Millisecond).String(), "failures_in_a_row", p.failures)
}

// claimSQL leases a batch of outbox rows, oldest first. The CTE's SKIP
// LOCKED keeps concurrent daemons off each other's rows; claimed_until makes
// a dead holder's claims expire.
const claimSQL = `
UPDATE {{.Outbox}} c
SET claimed_by = $1, claimed_until = now() + make_interval(secs => $2), attempts = c.attempts + 1
WHERE c.seq IN (
  SELECT seq FROM {{.Outbox}}
  WHERE claimed_until IS NULL OR claimed_until < now()
  ORDER BY seq
  FOR UPDATE SKIP LOCKED
  LIMIT $3)
RETURNING c.seq, c.attribute_id, c.agent_id, c.aspect_id, c.attempts`

type claimed struct {
	Seq         int64  `db:"seq"`
	AttributeID string `db:"attribute_id"`
	AgentID     string `db:"agent_id"`
	AspectID    string `db:"aspect_id"`
	Attempts    int    `db:"attempts"`
}

// doneSQL deletes handled rows (only while still ours) and returns each
// one's lag: the decisions are committed by now.
const doneSQL = `
DELETE FROM {{.Outbox}}
WHERE seq = ANY($1) AND claimed_by = $2
RETURNING extract(epoch FROM clock_timestamp() - classified_at)`

// DrainReport counts one drain.
type DrainReport struct {
	Claimed int
	GivenUp int
	Tally   supersession.Tally
}

// Drain handles the outbox until it is empty (or ctx ends). Before each
// batch it waits until the database has connection slots to spare (the
// guard): a crowded server's last slots are the agent's.
func (h *Hook) Drain(ctx context.Context, cfg Settings) error {
	for ctx.Err() == nil {
		if err := h.guard.Wait(ctx, Name); err != nil {
			return fmt.Errorf("inline: %w", err)
		}
		if h.current != nil {
			cfg = h.current()
		}
		n, err := h.drainBatch(ctx, cfg)
		if err != nil {
			return err
		}
		if n < batchSize {
			break
		}
	}
	var backlog float64
	if err := h.db.GetContext(ctx, &backlog, h.sql.Backlog); err == nil {
		h.metrics.Backlog.Set(backlog)
	}
	return nil
}

// drainBatch claims a batch of classifications and handles it. A batch that
// fails gives its claims back at once, consuming nothing: its rows are
// claimed again by the next drain (after a pause, see Run).
func (h *Hook) drainBatch(ctx context.Context, cfg Settings) (int, error) {
	var rows []claimed
	if err := h.db.SelectContext(ctx, &rows, h.sql.Claim, h.holder, h.ClaimFor.Seconds(), batchSize); err != nil {
		return 0, fmt.Errorf("inline: claim classifications: %w", err)
	}
	if len(rows) == 0 {
		return 0, nil
	}
	b := h.split(rows)
	if err := h.handle(ctx, cfg, b); err != nil {
		if ctx.Err() == nil { // cancelled: like a process killed, it leaves its claims to expire
			h.release(ctx, rows, err)
		}
		return 0, err
	}
	return len(rows), nil
}

// batch is a claimed batch: the rows to decide, by aspect, and those given up.
type batch struct {
	done, givenUp   []int64
	focus           map[string]bool
	focusOf         map[[2]string][]string // the classified attributes of each aspect
	agents, aspects []string
}

// split sorts the claimed rows into those to decide and those that failed
// too often.
func (h *Hook) split(rows []claimed) *batch {
	b := &batch{focus: map[string]bool{}, focusOf: map[[2]string][]string{}}
	for _, r := range rows {
		if r.Attempts > maxAttempts {
			b.givenUp = append(b.givenUp, r.Seq)
			h.log.Error("inline: giving up on a classification after repeated failures; the sweep will still see it",
				"attribute_id", r.AttributeID, "agent_id", r.AgentID, "attempts", r.Attempts-1)
			continue
		}
		b.done = append(b.done, r.Seq)
		b.focus[r.AttributeID] = true
		k := [2]string{r.AgentID, r.AspectID}
		if _, seen := b.focusOf[k]; !seen {
			b.agents = append(b.agents, r.AgentID)
			b.aspects = append(b.aspects, r.AspectID)
		}
		b.focusOf[k] = append(b.focusOf[k], r.AttributeID)
	}
	return b
}

// handle decides a batch and deletes its outbox rows once the decisions
// (and the keys of what it decided, with its change records) are committed.
func (h *Hook) handle(ctx context.Context, cfg Settings, b *batch) error {
	if len(b.givenUp) > 0 {
		if err := h.finish(ctx, b.givenUp, false); err != nil {
			return err
		}
		h.metrics.Processed.WithLabelValues("given_up").Add(float64(len(b.givenUp)))
	}
	if len(b.done) == 0 {
		return nil
	}
	t0 := time.Now()
	var d decided
	if cfg.Enabled {
		if err := h.decide(ctx, cfg, b, &d); err != nil {
			return err
		}
	}
	if err := h.finish(ctx, b.done, true); err != nil {
		return err
	}
	h.countDecided(d.present, b.focus)
	h.log.Debug("inline: batch decided", "classifications", len(b.done), "aspects", d.groups, "narrowed", d.narrowed, "siblings", len(d.present),
		"total", time.Since(t0).Round(time.Microsecond).String())
	return nil
}

// decided is what a batch loaded and decided.
type decided struct {
	present          map[string]bool // the attributes decided
	groups, narrowed int
}

// decide decides a batch, holding the claims meanwhile. A batch is a
// reader of the engine's change feed (supersession.Feed): of each aspect
// it touches it loads only what its classifications, and the changes the
// aspect's records name since its digest was made, can meet; it decides
// all of those changes, then stores the keys of what it decided and
// consumes those records in one statement, as an incremental pass would,
// so the digests stay whole between sweeps. Loading whole aspects was most
// of the hook's cost, growing with the aspect, not with the change.
//
// With the semantic fallback it decides the same way, heuristics only, and
// never waits for the LLM: the aspects it decided are recorded as owed the
// LLM's answer with the records' consumption and handed to the engine's
// background asker (supersession.Engine.AskLater), which reads them whole
// off the hook's path and asks the windows of the pairs the heuristics
// left; the sweep decides with the answers.
func (h *Hook) decide(ctx context.Context, cfg Settings, b *batch, d *decided) error {
	pass := supersession.Pass{
		Actor:   supersession.Actor{ChangedBy: "supersessiond:inline", Type: "system", RequestID: ident.Random("inline-", 6)},
		Source:  Name,
		Reloads: true,
	}
	if h.current != nil {
		pass.Brake = func() bool { return h.current().Engine.Shadow }
	}
	engine := cfg.Engine
	engine.SemanticFallback = false // the background asker asks (Reading.Ask)
	d.present = map[string]bool{}
	process := func(ctx context.Context, parts []supersession.Part) error {
		p := pass
		p.Focus = map[string]bool{}
		var groups []*supersession.Group
		for _, part := range parts {
			groups = append(groups, part.Groups...)
			for id := range part.Focus {
				p.Focus[id] = true
			}
		}
		for _, g := range groups {
			if h.examined != nil {
				h.examined(g.AgentID, g.AspectID)
			}
			for _, a := range g.Attrs {
				d.present[a.ID] = true
			}
		}
		d.groups += len(groups)
		_, err := h.engine.Process(ctx, engine, groups, p)
		return err
	}
	stop := h.holdClaims(ctx, b.done)
	defer stop()
	changes := make([]supersession.AspectChanges, len(b.agents))
	for i := range b.agents {
		changes[i] = supersession.AspectChanges{AgentID: b.agents[i], AspectID: b.aspects[i], IDs: b.focusOf[[2]string{b.agents[i], b.aspects[i]}]}
	}
	read := supersession.Reading{Ask: h.engine.AskLater(cfg.Engine)}
	x, err := h.feed.Examine(ctx, h.feed.Told(changes), read, process)
	d.narrowed = x.Narrowed
	if err != nil {
		return fmt.Errorf("inline: %w", err)
	}
	return nil
}

// releaseSQL gives back this holder's claims on a batch that failed. A
// failure that is the server's (store.Transient) is no attempt at the rows:
// their attempt is given back too, so a busy server never makes the hook
// give a classification up.
const releaseSQL = `
UPDATE {{.Outbox}}
SET claimed_by = NULL, claimed_until = NULL, attempts = greatest(attempts - $3, 0)
WHERE seq = ANY($1) AND claimed_by = $2`

// release gives back the claims of a failed batch. When even that fails
// (the server is gone), they expire.
func (h *Hook) release(ctx context.Context, rows []claimed, cause error) {
	seqs := make([]int64, len(rows))
	for i, r := range rows {
		seqs[i] = r.Seq
	}
	undo := 0
	if store.Transient(cause) {
		undo = 1
	}
	rctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if _, err := h.db.ExecContext(rctx, h.sql.Release, pq.Array(seqs), h.holder, undo); err != nil {
		h.log.Warn("inline: could not give back the claims of a failed batch; they expire", "claim_for", h.ClaimFor.String(), "err", err)
	}
}

// countDecided counts the classified attributes found among what a batch
// decided, and those gone.
func (h *Hook) countDecided(present, focus map[string]bool) {
	gone := 0
	for id := range focus {
		if !present[id] {
			gone++
		}
	}
	h.metrics.Processed.WithLabelValues("gone").Add(float64(gone))
	h.metrics.Processed.WithLabelValues("decided").Add(float64(len(focus) - gone))
}

// extendSQL renews this holder's claims on rows it is still working on.
const extendSQL = `
UPDATE {{.Outbox}}
SET claimed_until = now() + make_interval(secs => $3)
WHERE seq = ANY($1) AND claimed_by = $2`

// holdClaims renews the batch's claims every third of ClaimFor until the
// returned function is called, so that a batch that outlives its claim (a
// slow LLM) is not taken over by another daemon, which would ask the LLM
// the same questions again.
func (h *Hook) holdClaims(ctx context.Context, seqs []int64) (release func()) {
	return store.Renew(ctx, h.ClaimFor/3, func(ctx context.Context) error {
		_, err := h.db.ExecContext(ctx, h.sql.Extend, pq.Array(seqs), h.holder, h.ClaimFor.Seconds())
		return err
	}, func(err error) {
		h.log.Warn("inline: could not renew claims; another daemon may take the batch over", "err", err)
	})
}

func (h *Hook) finish(ctx context.Context, seqs []int64, observe bool) error {
	var lags []float64
	if err := h.db.SelectContext(ctx, &lags, h.sql.Done, pq.Array(seqs), h.holder); err != nil {
		return fmt.Errorf("inline: mark classifications handled: %w", err)
	}
	if observe {
		for _, l := range lags {
			h.metrics.Lag.Observe(l)
			if h.ObserveLag != nil {
				h.ObserveLag(l)
			}
		}
	}
	return nil
}

// backlogSQL counts what waits in the outbox; pruneSQL drops what a
// complete sweep made redundant.
const (
	backlogSQL = `SELECT count(*) FROM {{.Outbox}}`
	pruneSQL   = `DELETE FROM {{.Outbox}} WHERE classified_at < $1`
)

// statements are the hook's SQL, rendered for one database
// (schema.Render).
type statements struct{ Claim, Done, Extend, Release, Backlog, Prune string }

var hookSQL = statements{Claim: claimSQL, Done: doneSQL, Extend: extendSQL, Release: releaseSQL, Backlog: backlogSQL, Prune: pruneSQL}

// Prune deletes the outbox rows classified before a time: a complete sweep
// pass over all agents, run while the hook is off, decided every attribute
// classified before it started, and nobody else drains the outbox.
func (h *Hook) Prune(ctx context.Context, before time.Time) error {
	_, err := h.db.ExecContext(ctx, h.sql.Prune, before)
	return err
}
