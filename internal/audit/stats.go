package audit

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/supersessiond/supersessiond/internal/earned"
)

// StatsFilter selects the proposals stats are computed over.
type StatsFilter struct {
	Agent string
	Since time.Time // proposals created at or after; zero: ever
}

// Counts are what reviews say about one slice of the proposals (SPEC §10).
type Counts struct {
	Proposals int `db:"proposals" json:"proposals"`
	Pending   int `db:"pending" json:"pending"`
	Stale     int `db:"stale" json:"stale"`
	Accepted  int `db:"accepted" json:"accepted"`
	Rejected  int `db:"rejected" json:"rejected"`
	Applied   int `db:"applied" json:"applied"`
	// AppliedUnreviewed were applied without being accepted first:
	// applying was the decision.
	AppliedUnreviewed int `db:"applied_unreviewed" json:"applied_unreviewed"`
	Undone            int `db:"undone" json:"undone"`
	// Decided = accepted + rejected + applied without acceptance.
	Decided int `db:"decided" json:"decided"`
	// Correct are the decided proposals judged right: accepted or applied,
	// and not undone since.
	Correct int `db:"correct" json:"correct"`
	// Precision = Correct / Decided, which is (accepted + applied − undone)
	// / decided when each proposal is counted once; nil until something
	// was decided.
	Precision *float64 `db:"-" json:"precision"`
}

func (c *Counts) finish() {
	if c.Decided > 0 {
		p := float64(c.Correct) / float64(c.Decided)
		c.Precision = &p
	}
}

// Slice is the counts of one signal, method or confidence band.
type Slice struct {
	Name string `json:"name"`
	Counts
}

// Stats is the judgment's record on this database.
type Stats struct {
	Agent        string  `json:"agent,omitempty"`
	Since        *string `json:"since,omitempty"`
	Total        Counts  `json:"total"`
	Pending      int     `json:"pending"`
	BySignal     []Slice `json:"by_signal"`
	ByMethod     []Slice `json:"by_method"`
	ByConfidence []Slice `json:"by_confidence"`
	// Enforcement is maintenance.enforcement as the rules were judged
	// against it; Rules each rule's standing (SPEC §13), whatever the mode:
	// under threshold they say what earned would do.
	Enforcement Enforcement       `json:"enforcement"`
	Rules       []earned.Standing `json:"rules"`
}

// Enforcement is maintenance.enforcement: its mode (threshold or earned)
// and the target precision a rule's bound must reach.
type Enforcement struct {
	Mode            string  `json:"mode"`
	TargetPrecision float64 `json:"target_precision"`
}

// NewEnforcement is maintenance.enforcement's mode and target precision,
// with the defaults for what they leave unset.
func NewEnforcement(mode string, targetPrecision float64) Enforcement {
	return Enforcement{Mode: strings.ToLower(mode), TargetPrecision: targetPrecision}.withDefaults()
}

// Brake is what an operator command asks of the configuration in force:
// whether the emergency brake (mutationsFrozen) is on, under which it
// refuses to change agent data. Settings have it; so has a loaded
// configuration.
type Brake interface{ Frozen() bool }

// Settings are what the operator commands take of the configuration in
// force: the emergency brake, and how live decisions are enforced (the
// stats say it).
type Settings struct {
	MutationsFrozen bool
	Enforcement     Enforcement
}

// Frozen reports the emergency brake.
func (s Settings) Frozen() bool { return s.MutationsFrozen }

// withDefaults is e with the defaults for what it leaves unset.
func (e Enforcement) withDefaults() Enforcement {
	if e.Mode == "" {
		e.Mode = "threshold"
	}
	if e.TargetPrecision <= 0 || e.TargetPrecision >= 1 {
		e.TargetPrecision = earned.DefaultTarget
	}
	return e
}

// Stats counts, over the proposals f selects, what was proposed, accepted,
// rejected, applied and undone, in total, per signal (a proposal counts for
// each signal it carries), per method and per confidence band (0.1 wide,
// named by its lower bound), with the precision that implies; and each
// rule's standing for earned auto-apply against e's target.
func (o *Ops) Stats(ctx context.Context, f StatsFilter, e Enforcement) (*Stats, error) {
	var since any
	st := &Stats{Agent: f.Agent, BySignal: []Slice{}, ByMethod: []Slice{}, ByConfidence: []Slice{},
		Enforcement: e.withDefaults(), Rules: []earned.Standing{}}
	if !f.Since.IsZero() {
		since = f.Since
		s := f.Since.UTC().Format(time.RFC3339)
		st.Since = &s
	}
	var rows []struct {
		Dim string `db:"dim"`
		Key string `db:"key"`
		Counts
	}
	if err := o.db.SelectContext(ctx, &rows, o.sql.Queue.Stats, f.Agent, since); err != nil {
		return nil, fmt.Errorf("stats: read memory_history: %w", err)
	}
	for _, r := range rows {
		r.Counts.finish()
		sl := Slice{Name: r.Key, Counts: r.Counts}
		switch r.Dim {
		case "all":
			st.Total = r.Counts
			st.Pending = r.Pending
		case "method":
			st.ByMethod = append(st.ByMethod, sl)
		case "signal":
			st.BySignal = append(st.BySignal, sl)
		case "confidence":
			st.ByConfidence = append(st.ByConfidence, sl)
		}
	}
	byName := func(s []Slice) { sort.Slice(s, func(i, j int) bool { return s[i].Name < s[j].Name }) }
	byName(st.BySignal)
	byName(st.ByMethod)
	byName(st.ByConfidence)
	records, err := o.Rules(ctx, f)
	if err != nil {
		return nil, err
	}
	for _, r := range records {
		st.Rules = append(st.Rules, earned.Judge(r, st.Enforcement.TargetPrecision))
	}
	return st, nil
}

// Rules reads each rule's record for earned auto-apply (SPEC §13) over the
// proposals and supersessions f selects, by rule name: the engine's own
// reading, the one it applies by.
func (o *Ops) Rules(ctx context.Context, f StatsFilter) ([]earned.Record, error) {
	var since any
	if !f.Since.IsZero() {
		since = f.Since
	}
	records, err := o.engine.Rules(ctx, f.Agent, since)
	if err != nil {
		return nil, fmt.Errorf("stats: %w", err)
	}
	return records, nil
}

// WriteStatsJSON prints the stats as one JSON object.
func WriteStatsJSON(w io.Writer, st *Stats) error {
	return json.NewEncoder(w).Encode(st)
}

// WriteStatsTable prints the stats for a terminal: one section per
// dimension, a line per slice.
func WriteStatsTable(w io.Writer, st *Stats) error {
	scope := "all agents"
	if st.Agent != "" {
		scope = "agent " + st.Agent
	}
	if st.Since != nil {
		scope += ", proposals since " + *st.Since
	}
	fmt.Fprintf(w, "proposals (%s): %d, %d pending, %d stale; precision %s over %d decided\n\n",
		scope, st.Total.Proposals, st.Pending, st.Total.Stale, FormatPrecision(st.Total.Precision), st.Total.Decided)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	sections := []struct {
		title  string
		slices []Slice
	}{{"SIGNAL", st.BySignal}, {"METHOD", st.ByMethod}, {"CONFIDENCE", st.ByConfidence}}
	for i, sec := range sections {
		if i > 0 {
			fmt.Fprintln(tw)
		}
		fmt.Fprintf(tw, "%s\tPROPOSALS\tPENDING\tACCEPTED\tREJECTED\tAPPLIED\tUNDONE\tDECIDED\tPRECISION\n", sec.title)
		for _, s := range sec.slices {
			fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%s\n", s.Name, s.Proposals, s.Pending, s.Accepted, s.Rejected,
				s.Applied, s.Undone, s.Decided, FormatPrecision(s.Precision))
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(w, "\nprecision = (accepted + applied - undone) / decided; decided = accepted + rejected + applied without acceptance")
	return writeRules(w, st)
}

// writeRules prints each rule's standing for earned auto-apply.
func writeRules(w io.Writer, st *Stats) error {
	e := st.Enforcement
	fmt.Fprintf(w, "\nearned auto-apply: maintenance.enforcement.mode %s, targetPrecision %s", e.Mode,
		strconv.FormatFloat(e.TargetPrecision, 'f', -1, 64))
	if e.Mode != "earned" {
		fmt.Fprint(w, " (under threshold every decision at or above supersessionMinConfidence is applied; the states say what earned would do)")
	}
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "RULE\tSTATE\tBOUND\tDECIDED\tCORRECT\tPRECISION\tREVIEWS NEEDED")
	for _, r := range st.Rules {
		fmt.Fprintf(tw, "%s\t%s\t%.3f\t%d\t%d\t%s\t%s\n", r.Rule, r.State, r.Bound, r.Decided, r.Correct, FormatPrecision(r.Precision),
			FormatReviewsNeeded(r.ReviewsNeeded))
	}
	if len(st.Rules) == 0 {
		fmt.Fprintln(tw, "(no proposals yet)")
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(w, "\nbound = lower end of the 95% Wilson interval of the rule's reviewed precision; a rule applies on its own once it reaches the target")
	fmt.Fprintln(w, "reviews needed = more accepted reviews, with no rejection or undo, that would earn it; an undo of what a rule applied on its own counts as wrong")
	return nil
}

// FormatReviewsNeeded prints how many accepted reviews a rule still needs.
func FormatReviewsNeeded(n int) string {
	switch {
	case n < 0:
		return "out of reach"
	case n == 0:
		return "-"
	}
	return strconv.Itoa(n)
}

// FormatPrecision prints a precision, or "-" when nothing was decided.
func FormatPrecision(p *float64) string {
	if p == nil {
		return "-"
	}
	return strconv.FormatFloat(*p, 'f', 2, 64)
}
