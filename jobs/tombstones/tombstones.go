package tombstones

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"

	"github.com/supersessiond/supersessiond/internal/schema"
	"github.com/supersessiond/supersessiond/jobs"
)

// Name is the job's name: its lease, its log and metric label.
const Name = "tombstones"

// Budget bounds, see Budget.
const (
	MinBudget = 10 * time.Second
	MaxBudget = 5 * time.Minute
)

// triageShare is the part of the budget triage may use while there is a
// backlog; the re-check of preserved tombstones always keeps the rest, so a
// backlog that never drains cannot starve releases.
const triageShare = 0.75

// Options tune a Job. The zero value is the daemon's.
type Options struct {
	// Budget is the time a pass may take; 0 derives it from the schedule
	// (see Budget).
	Budget time.Duration
}

// Job is the tombstone reconciliation job.
type Job struct {
	db     *sqlx.DB
	sql    statements
	log    *slog.Logger
	m      *Metrics
	now    func() time.Time // the clock the budget is measured with
	braked func() bool      // asked before every batch of a live pass
	opts   Options
	hooks  hooks
}

// hooks let tests act at the points that matter for atomicity.
type hooks struct {
	// beforeWrite runs in a live batch after the dependent check, before the
	// batch's writes ("triage" or "release").
	beforeWrite func(phase string)
}

// New returns the job for the database deps describe.
func New(deps jobs.Deps, opts Options) *Job {
	deps = deps.WithDefaults()
	return &Job{db: deps.DB, sql: schema.Render(deps.Names, tombstonesSQL), log: deps.Logger.With("job", Name), m: NewMetrics(deps.Registry),
		now: deps.Now, braked: deps.Braked, opts: opts}
}

// Metrics are the job's collectors.
func (j *Job) Metrics() *Metrics { return j.m }

func (j *Job) Name() string { return Name }

// Settings are what a pass runs under, made once per load of the
// configuration.
type Settings struct {
	Schedule jobs.Schedule // maintenance.schedules.tombstones
	Mode     jobs.Mode
	// MinAge, BatchSize and KeepDeleted are maintenance.tombstones'.
	MinAge      time.Duration
	BatchSize   int
	KeepDeleted time.Duration
}

// Schedule is maintenance.schedules.tombstones.
func (j *Job) Schedule(s Settings) string { return s.Schedule.Spec }

// Run is one pass; the report is a *Report, also when the pass failed
// part-way (it then says what was committed before the failure).
func (j *Job) Run(ctx context.Context, s Settings) (jobs.Report, error) {
	return j.Reconcile(ctx, s)
}

// Budget is the time one pass may take under s: a quarter of the interval
// between two ticks of the job's schedule, within [MinBudget, MaxBudget], or
// MaxBudget when the job is not scheduled (a `reconcile --once` run by hand).
// A pass then ends well before the next tick, leaves the database quiet most
// of the time, and works off a backlog larger than a pass can handle over
// several passes, one short transaction per batch.
func Budget(s Settings, now time.Time) time.Duration {
	if s.Schedule.Spec == jobs.ScheduleOff || s.Schedule.Next == nil {
		return MaxBudget
	}
	next := s.Schedule.Next(now)
	gap := s.Schedule.Next(next).Sub(next)
	return min(max(gap/4, MinBudget), MaxBudget)
}

// candidate is a tombstone as a batch sees it. The embedding is never read.
type candidate struct {
	ID            string    `db:"id"`
	WorkspaceName string    `db:"workspace_name"`
	Superseded    bool      `db:"superseded"`
	At            time.Time `db:"at"`  // deleted_at (triage) or tombstone_preserved_at (re-check): the keyset
	TID           string    `db:"tid"` // ctid of the claimed row (triage)
}

// position is a keyset position (timestamp, id) in a scan. The zero value
// is before every row.
type position struct {
	At    time.Time `json:"at"`
	ID    string    `json:"id"`
	Valid bool      `json:"-"`
}

// args renders p as the ($ts, $id) pair of a row comparison; bound is the
// timestamp used when p is not a real position ("-infinity" or "infinity").
func (p position) args(bound string) (any, string) {
	if !p.Valid {
		return bound, ""
	}
	return p.At, p.ID
}

// pass is the state of one Reconcile call.
type pass struct {
	shadow    bool
	runID     string // recorded with each document it deletes
	keep      bool   // keep each deleted row (maintenance.tombstones.keepDeleted > 0)
	lz4       bool   // the server compresses with lz4: the kept copies are written so
	batchSize int
	dbStart   time.Time // database time at the start
	cutoff    time.Time // dbStart - minAge: triage takes tombstones deleted at or before
	start     time.Time // j.now() at the start
	budget    time.Duration
}

func (p *pass) triageDeadline() time.Time {
	return p.start.Add(time.Duration(float64(p.budget) * triageShare))
}

func (p *pass) deadline() time.Time { return p.start.Add(p.budget) }

// Reconcile runs one pass: triage of the tombstones awaiting it, then the
// re-check of preserved ones, each in batches of maintenance.tombstones.
// batchSize, each batch its own short transaction, within the time budget.
func (j *Job) Reconcile(ctx context.Context, s Settings) (*Report, error) {
	start := j.now()
	r := &Report{Run: jobs.NewRun(Name, s.Mode, start), Backlog: -1, Held: -1, Skipped: []jobs.Skip{}, DeletedIDs: []string{}}
	err := j.reconcile(ctx, s, start, r)
	r.Finish(ctx, j.now().Sub(start), err)
	return r, err
}

func (j *Job) reconcile(ctx context.Context, s Settings, start time.Time, r *Report) error {
	p := &pass{
		shadow:    s.Mode.Shadow(),
		runID:     r.RunID,
		keep:      s.KeepDeleted > 0,
		batchSize: max(s.BatchSize, 1),
		start:     start,
		budget:    j.opts.Budget,
	}
	if p.budget <= 0 {
		p.budget = Budget(s, p.start)
	}
	r.Budget, r.BudgetSeconds = p.budget, jobs.Seconds(p.budget)

	if err := j.db.GetContext(ctx, &p.dbStart, j.sql.DbNow); err != nil {
		return fmt.Errorf("tombstones: read the database clock: %w", err)
	}
	p.cutoff = p.dbStart.Add(-s.MinAge)
	if p.keep && !p.shadow {
		p.lz4 = j.lz4(ctx)
	}

	stopped, err := j.triage(ctx, p, r)
	if err != nil {
		return err
	}
	if err := j.recheck(ctx, p, r); err != nil {
		return err
	}
	if err := j.purge(ctx, p, s.KeepDeleted, r); err != nil {
		// The pass's own work is done; a copy kept longer is the safe side
		// of a failure, and the next pass purges it.
		j.log.Warn("could not purge the kept copies of deleted documents; the next pass tries again", "err", err)
	}

	// A shadow pass deleted nothing: count from the start, it costs nothing
	// more and says what a live pass would face.
	if p.shadow {
		stopped = position{}
	}
	minAge := s.MinAge.Seconds()
	stoppedAt, stoppedID := stopped.args("-infinity")
	if err := j.db.GetContext(ctx, &r.Backlog, j.sql.Backlog, minAge, stoppedAt, stoppedID); err != nil {
		return fmt.Errorf("tombstones: count the backlog: %w", err)
	}
	if err := j.db.GetContext(ctx, &r.Held, j.sql.Held); err != nil {
		return fmt.Errorf("tombstones: count preserved tombstones: %w", err)
	}
	j.m.Backlog.Set(float64(r.Backlog))
	j.m.Held.Set(float64(r.Held))
	if r.BudgetExhausted() {
		r.LeftForLater = r.Backlog
		j.log.Info("time budget used up; the rest is left for later passes",
			"budget", p.budget.String(), "left_for_later", r.LeftForLater, "recheck_complete", r.RecheckComplete)
	}
	return nil
}

// observeBrake turns a live pass into a counting one when shadowMode or
// mutationsFrozen was turned on since it began.
func (j *Job) observeBrake(p *pass, r *Report) {
	if p.shadow || !j.braked() {
		return
	}
	p.shadow, r.Braked = true, true
	j.log.Warn("tombstones: shadowMode or mutationsFrozen turned on during the pass; the rest of it changes nothing")
}

// triage works through the tombstones awaiting it, batch by batch, until
// none is left or its share of the budget is used (at least one batch, so
// every pass makes progress). It returns the keyset position it stopped at.
func (j *Job) triage(ctx context.Context, p *pass, r *Report) (position, error) {
	var after position
	for {
		if err := ctx.Err(); err != nil {
			return after, fmt.Errorf("tombstones: triage interrupted after %d batches: %w", r.Batches, err)
		}
		if r.Batches > 0 && !j.now().Before(p.triageDeadline()) {
			r.Stopped = jobs.StoppedBudget
			return after, nil
		}
		j.observeBrake(p, r)
		n, last, err := j.triageBatch(ctx, p, r, after)
		if err != nil {
			return after, fmt.Errorf("tombstones: triage batch %d: %w", r.Batches+1, err)
		}
		if n == 0 {
			return after, nil
		}
		after = last
	}
}

// triageBatch claims one batch after the keyset position, decides it with
// one dependent query and applies the decisions, all in one transaction. It
// returns how many tombstones it saw and the position of the last.
func (j *Job) triageBatch(ctx context.Context, p *pass, r *Report, after position) (int, position, error) {
	tx, err := j.db.BeginTxx(ctx, &sql.TxOptions{ReadOnly: p.shadow})
	if err != nil {
		return 0, after, fmt.Errorf("begin: %w", err)
	}
	defer func() { _ = tx.Rollback() }()
	if _, err := tx.ExecContext(ctx, j.sql.OrderedScan); err != nil {
		return 0, after, fmt.Errorf("set up: %w", err)
	}

	query := j.sql.Claim
	if p.shadow {
		query = j.sql.Pending
	}
	afterAt, afterID := after.args("-infinity")
	var batch []candidate
	if err := tx.SelectContext(ctx, &batch, query, p.cutoff, afterAt, afterID, p.batchSize); err != nil {
		return 0, after, fmt.Errorf("claim tombstones: %w", err)
	}
	if len(batch) == 0 {
		return 0, after, nil
	}
	last := batch[len(batch)-1]
	lastPos := position{At: last.At, ID: last.ID, Valid: true}

	cited, err := j.citedAmong(ctx, tx, batch)
	if err != nil {
		return 0, after, err
	}
	var keep, drop []string // ctids
	for _, c := range batch {
		if c.Superseded && cited[c.ID] {
			keep = append(keep, c.TID)
		} else {
			drop = append(drop, c.TID)
		}
	}
	if p.shadow {
		r.Batches++
		r.Examined += len(batch)
		r.WouldPreserve += len(keep)
		r.WouldDelete += len(drop)
		j.log.Debug("tombstones triaged (shadow: nothing changed)", "examined", len(batch), "would_preserve", len(keep), "would_delete", len(drop))
		return len(batch), lastPos, nil
	}
	if j.hooks.beforeWrite != nil {
		j.hooks.beforeWrite("triage")
	}
	preserved, err := execCount(ctx, tx, j.sql.Preserve, keep)
	if err != nil {
		return 0, after, fmt.Errorf("preserve %d tombstones: %w", len(keep), err)
	}
	gone, err := deleteRecorded(ctx, tx, j.sql.Delete, drop, p, "triage")
	if err != nil {
		return 0, after, fmt.Errorf("hard-delete %d tombstones: %w", len(drop), err)
	}
	if err := tx.Commit(); err != nil {
		return 0, after, fmt.Errorf("commit: %w", err)
	}
	deleted := len(gone)
	r.Batches++
	r.Examined += len(batch)
	r.Preserved += preserved
	r.Deleted += deleted
	r.DeletedIDs = append(r.DeletedIDs, gone...)
	j.m.Preserved.Add(float64(preserved))
	j.m.Deleted.Add(float64(deleted))
	// The change log: one line per batch that changed something, counts only.
	level := slog.LevelDebug
	if preserved+deleted > 0 {
		level = slog.LevelInfo
	}
	j.log.Log(ctx, level, "tombstones triaged", "run_id", p.runID, "examined", len(batch), "preserved", preserved, "deleted", deleted,
		"workspaces", distinctWorkspaces(batch))
	return len(batch), lastPos, nil
}

// recheck goes once round the preserved tombstones, starting after where
// the previous pass stopped, and releases those that no longer qualify:
// superseded and cited by a live document of their workspace.
func (j *Job) recheck(ctx context.Context, p *pass, r *Report) error {
	from, err := j.loadCursor(ctx)
	if err != nil {
		return err
	}
	// Two legs: from the cursor to the end, then from the beginning up to
	// the cursor. A zero cursor (first pass, nothing saved) needs one leg.
	legs := []struct{ after, until position }{{after: from}}
	if from.Valid {
		legs = append(legs, struct{ after, until position }{until: from})
	}
	at, moved, pages := from, false, 0
	defer func() {
		if !p.shadow && moved {
			if serr := j.saveCursor(context.WithoutCancel(ctx), at); serr != nil {
				j.log.Warn("could not save the re-check position; the next pass re-checks from the previous one", "err", serr)
			}
		}
	}()
	for _, leg := range legs {
		after := leg.after
		for {
			if err := ctx.Err(); err != nil {
				return fmt.Errorf("tombstones: re-check interrupted: %w", err)
			}
			if pages > 0 && !j.now().Before(p.deadline()) {
				r.Stopped = jobs.StoppedBudget
				return nil
			}
			j.observeBrake(p, r)
			n, last, err := j.recheckBatch(ctx, p, r, after, leg.until)
			if err != nil {
				return fmt.Errorf("tombstones: re-check batch %d: %w", pages+1, err)
			}
			if n == 0 {
				break
			}
			pages++
			after, at, moved = last, last, true
		}
	}
	r.RecheckComplete = true
	return nil
}

func (j *Job) recheckBatch(ctx context.Context, p *pass, r *Report, after, until position) (int, position, error) {
	tx, err := j.db.BeginTxx(ctx, &sql.TxOptions{ReadOnly: p.shadow})
	if err != nil {
		return 0, after, fmt.Errorf("begin: %w", err)
	}
	defer func() { _ = tx.Rollback() }()
	if _, err := tx.ExecContext(ctx, j.sql.OrderedScan); err != nil {
		return 0, after, fmt.Errorf("set up: %w", err)
	}

	afterAt, afterID := after.args("-infinity")
	untilAt, untilID := until.args("infinity")
	var page []candidate
	err = tx.SelectContext(ctx, &page, j.sql.PreservedPage,
		afterAt, afterID, untilAt, untilID, p.dbStart, p.batchSize)
	if err != nil {
		return 0, after, fmt.Errorf("read preserved tombstones: %w", err)
	}
	if len(page) == 0 {
		return 0, after, nil
	}
	last := page[len(page)-1]
	lastPos := position{At: last.At, ID: last.ID, Valid: true}

	cited, err := j.citedAmong(ctx, tx, page)
	if err != nil {
		return 0, after, err
	}
	var gone []string
	for _, c := range page {
		if !c.Superseded || !cited[c.ID] {
			gone = append(gone, c.ID)
		}
	}
	if p.shadow {
		r.Rechecked += len(page)
		r.WouldRelease += len(gone)
		j.log.Debug("preserved tombstones re-checked (shadow: nothing changed)", "rechecked", len(page), "would_release", len(gone))
		return len(page), lastPos, nil
	}
	if j.hooks.beforeWrite != nil {
		j.hooks.beforeWrite("release")
	}
	freed, err := deleteRecorded(ctx, tx, j.sql.Release, gone, p, "release")
	if err != nil {
		return 0, after, fmt.Errorf("release %d tombstones: %w", len(gone), err)
	}
	if err := tx.Commit(); err != nil {
		return 0, after, fmt.Errorf("commit: %w", err)
	}
	released := len(freed)
	r.Rechecked += len(page)
	r.Released += released
	r.DeletedIDs = append(r.DeletedIDs, freed...)
	j.m.Released.Add(float64(released))
	level := slog.LevelDebug
	if released > 0 {
		level = slog.LevelInfo
	}
	j.log.Log(ctx, level, "preserved tombstones re-checked", "run_id", p.runID, "rechecked", len(page), "released", released,
		"workspaces", distinctWorkspaces(page))
	return len(page), lastPos, nil
}

// citedAmong runs the batch's one dependent query over its superseded
// candidates (the others are deleted whoever cites them) and returns the set
// of those a live document of the same workspace cites.
func (j *Job) citedAmong(ctx context.Context, tx *sqlx.Tx, batch []candidate) (map[string]bool, error) {
	var ids, workspaces []string
	for _, c := range batch {
		if c.Superseded {
			ids = append(ids, c.ID)
			workspaces = append(workspaces, c.WorkspaceName)
		}
	}
	cited := make(map[string]bool)
	if len(ids) == 0 {
		return cited, nil
	}
	var got []string
	if err := tx.SelectContext(ctx, &got, j.sql.Cited, pq.Array(ids), pq.Array(workspaces)); err != nil {
		return nil, fmt.Errorf("find live dependents of %d superseded tombstones: %w", len(ids), err)
	}
	for _, id := range got {
		cited[id] = true
	}
	return cited, nil
}

// distinctWorkspaces counts the workspaces a batch touches.
func distinctWorkspaces(batch []candidate) int {
	seen := map[string]bool{}
	for _, c := range batch {
		seen[c.WorkspaceName] = true
	}
	return len(seen)
}

// execCount runs a statement over a set of ids and returns the rows it
// changed; an empty set is not sent at all.
func execCount(ctx context.Context, tx *sqlx.Tx, query string, ids []string) (int, error) {
	if len(ids) == 0 {
		return 0, nil
	}
	res, err := tx.ExecContext(ctx, query, pq.Array(ids))
	if err != nil {
		return 0, err
	}
	n, err := res.RowsAffected()
	return int(n), err
}

// deleteRecorded runs deleteSQL or releaseSQL over a set (ctids or ids):
// it hard-deletes and records each document in one statement, and returns
// the ids it deleted. An empty set is not sent at all.
func deleteRecorded(ctx context.Context, tx *sqlx.Tx, query [2]string, set []string, p *pass, phase string) ([]string, error) {
	if len(set) == 0 {
		return nil, nil
	}
	q := query[0]
	if p.keep {
		q = query[1]
		if p.lz4 {
			if _, err := tx.ExecContext(ctx, lz4SQL); err != nil {
				return nil, err
			}
		}
	}
	var ids []string
	if err := tx.SelectContext(ctx, &ids, q, pq.Array(set), p.runID, phase); err != nil {
		return nil, err
	}
	return ids, nil
}

// lz4SQL makes the batch's transaction compress what it writes with lz4:
// the kept copies of deleted documents (a row with its embedding, some kB
// of jsonb each) cost a third less to write than with PostgreSQL's default
// pglz, most of a pass that keeps them. A copy written either way is read
// the same way (the method is stored with each value).
const lz4SQL = `SET LOCAL default_toast_compression = lz4`

// lz4 reports whether the server can compress with lz4 (a build option of
// PostgreSQL 14 and later; Debian's and the official images' have it): a
// server without it refuses the setting, and the copies are written with
// its default.
func (j *Job) lz4(ctx context.Context) bool {
	if _, err := j.db.ExecContext(ctx, `SELECT set_config('default_toast_compression', 'lz4', true)`); err != nil {
		j.log.Debug("the server cannot compress with lz4; kept copies of deleted documents are written with its default", "err", err)
		return false
	}
	return true
}

// purge drops the kept copies of documents deleted more than keep ago, in
// batches, after a live pass's own work (at least one batch, more while the
// budget lasts). Their records stay. A shadow pass, or one the brake
// stopped, keeps everything: keeping longer is the safe side.
func (j *Job) purge(ctx context.Context, p *pass, keep time.Duration, r *Report) error {
	j.observeBrake(p, r)
	if p.shadow {
		return nil
	}
	for first := true; first || j.now().Before(p.deadline()); first = false {
		res, err := j.db.ExecContext(ctx, j.sql.Purge, keep.Seconds(), p.batchSize)
		if err != nil {
			return fmt.Errorf("tombstones: purge copies of documents deleted more than %s ago: %w", keep, err)
		}
		n, err := res.RowsAffected()
		if err != nil {
			return fmt.Errorf("tombstones: purge: %w", err)
		}
		r.Purged += int(n)
		if int(n) < p.batchSize {
			break
		}
	}
	if r.Purged > 0 {
		j.log.Info("purged the kept copies of documents deleted before keepDeleted", "run_id", p.runID, "purged", r.Purged,
			"keep_deleted", keep.String())
	}
	return nil
}

func (j *Job) loadCursor(ctx context.Context) (position, error) {
	var raw []byte
	err := j.db.GetContext(ctx, &raw, j.sql.LoadCursor, cursorName)
	if errors.Is(err, sql.ErrNoRows) {
		return position{}, nil
	}
	if err != nil {
		return position{}, fmt.Errorf("tombstones: read the re-check position: %w", err)
	}
	var p position
	if err := json.Unmarshal(raw, &p); err != nil || p.ID == "" {
		// A damaged bookkeeping row costs one full round from the start,
		// nothing more.
		j.log.Warn("ignoring an unreadable re-check position", "value", string(raw), "err", err)
		return position{}, nil
	}
	p.Valid = true
	return p, nil
}

func (j *Job) saveCursor(ctx context.Context, p position) error {
	raw, err := json.Marshal(p)
	if err != nil {
		return err
	}
	if _, err := j.db.ExecContext(ctx, j.sql.SaveCursor, cursorName, raw); err != nil {
		return fmt.Errorf("tombstones: save the re-check position: %w", err)
	}
	return nil
}
