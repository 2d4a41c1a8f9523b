package audit

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/supersessiond/supersessiond/internal/supersession"
)

// Filter selects history rows.
type Filter struct {
	Agent string    // metadata ->> 'agent_id'
	Event string    // exact event name
	Since time.Time // created_at >= Since, when non-zero
	Limit int
}

// Entry is one memory_history row.
type Entry struct {
	ID         string    `db:"id" json:"id"`
	MemoryID   string    `db:"memory_id" json:"memory_id"`
	Event      string    `db:"event" json:"event"`
	OldContent *string   `db:"old_content" json:"old_content"`
	NewContent *string   `db:"new_content" json:"new_content"`
	ChangedBy  string    `db:"changed_by" json:"changed_by"`
	Reason     *string   `db:"reason" json:"reason"`
	Metadata   JSONB     `db:"metadata" json:"metadata"`
	CreatedAt  time.Time `db:"created_at" json:"created_at"`
	ActorType  *string   `db:"actor_type" json:"actor_type"`
	SessionID  *string   `db:"session_id" json:"session_id"`
	RequestID  *string   `db:"request_id" json:"request_id"`
	// UndoneBy is, on an attribute_superseded row that was undone, the id of
	// its supersession_reverted row (History fills it; it is not a column).
	UndoneBy *string `db:"undone_by" json:"undone_by,omitempty"`
}

// Events are the history events the daemon writes (SPEC §5, and protect's),
// the names `history --event` accepts.
var Events = []string{
	"supersession_proposal", "attribute_superseded", "supersession_reverted",
	"supersession_proposal_accepted", "supersession_proposal_rejected",
	"compaction_retried", "compaction_failed",
	"attribute_protected", "attribute_unprotected",
}

// JSONB is a nullable jsonb column that marshals as the JSON it holds
// (null when NULL), so metadata prints as an object, not a string.
type JSONB []byte

// Scan implements sql.Scanner.
func (j *JSONB) Scan(src any) error {
	switch v := src.(type) {
	case nil:
		*j = nil
	case []byte:
		*j = append((*j)[:0], v...)
	case string:
		*j = JSONB(v)
	default:
		return fmt.Errorf("jsonb: cannot scan %T", src)
	}
	return nil
}

// MarshalJSON implements json.Marshaler.
func (j JSONB) MarshalJSON() ([]byte, error) {
	if len(j) == 0 {
		return []byte("null"), nil
	}
	return j, nil
}

// History returns the rows matching f, newest first.
func (o *Ops) History(ctx context.Context, f Filter) ([]Entry, error) {
	if f.Limit <= 0 {
		f.Limit = 50
	}
	var since any
	if !f.Since.IsZero() {
		since = f.Since
	}
	var out []Entry
	q, args, err := o.sql.History.Bind(map[string]any{"agent": f.Agent, "event": f.Event, "since": since, "limit": f.Limit})
	if err == nil {
		err = o.db.SelectContext(ctx, &out, q, args...)
	}
	if err != nil {
		return nil, fmt.Errorf("history: read memory_history: %w", err)
	}
	return out, nil
}

// ParseSince accepts a duration back from now (90m, 24h, 7d) or an RFC 3339
// time.
func ParseSince(s string, now time.Time) (time.Time, error) {
	s = strings.TrimSpace(s)
	if t, err := time.Parse(time.RFC3339, s); err == nil {
		return t, nil
	}
	if days, ok := strings.CutSuffix(s, "d"); ok {
		if n, err := strconv.Atoi(days); err == nil && n >= 0 {
			return now.Add(-time.Duration(n) * 24 * time.Hour), nil
		}
	}
	d, err := time.ParseDuration(s)
	if err != nil || d < 0 {
		return time.Time{}, fmt.Errorf("--since %q is neither a duration (like 90m, 24h, 7d) nor an RFC 3339 time (like 2026-11-01T00:00:00Z)", s)
	}
	return now.Add(-d), nil
}

// WriteJSON prints one JSON object per entry, every column, metadata as an
// object.
func WriteJSON(w io.Writer, entries []Entry) error {
	enc := json.NewEncoder(w)
	for _, e := range entries {
		if err := enc.Encode(e); err != nil {
			return err
		}
	}
	return nil
}

// WriteTable prints aligned columns for a terminal.
func WriteTable(w io.Writer, entries []Entry) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "TIME\tEVENT\tAGENT\tCHANGE\tCONF\tSIGNALS\tBY\tID")
	for _, e := range entries {
		var m struct {
			AgentID    string   `json:"agent_id"`
			Confidence *float64 `json:"confidence"`
			Signals    []struct {
				Name string `json:"name"`
			} `json:"signals"`
			Mode       string `json:"mode"`
			ProposalID string `json:"proposal_id"`
			Reverted   string `json:"reverted_history_id"`
			Note       string `json:"note"`
			EventID    any    `json:"event_id"`
			Error      string `json:"error"`
		}
		_ = json.Unmarshal(e.Metadata, &m)
		conf := "-"
		if m.Confidence != nil {
			conf = strconv.FormatFloat(*m.Confidence, 'f', 2, 64)
		}
		var names []string
		for _, s := range m.Signals {
			names = append(names, s.Name)
		}
		signals := "-"
		if len(names) > 0 {
			signals = strings.Join(names, ",")
		}
		event := e.Event
		switch {
		case m.Mode != "" && e.Event == "supersession_proposal":
			event += " (" + m.Mode + ")"
		case e.UndoneBy != nil:
			event += " (undone)"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", e.CreatedAt.UTC().Format("2006-01-02 15:04:05"), event,
			orDash(m.AgentID), change(e, m.ProposalID, m.Reverted, m.Note, m.Error), conf, signals, e.Who().String(), e.ID)
	}
	return tw.Flush()
}

func change(e Entry, proposalID, reverted, note, errText string) string {
	switch {
	case e.OldContent != nil && e.NewContent != nil && *e.OldContent != "":
		return clip(deref(e.OldContent), 34) + " → " + clip(deref(e.NewContent), 34)
	case e.NewContent != nil && *e.NewContent != "":
		return clip(*e.NewContent, 70)
	case e.OldContent != nil && *e.OldContent != "":
		return clip(*e.OldContent, 70)
	case proposalID != "":
		s := "proposal " + proposalID
		if note != "" {
			s += ": " + clip(note, 40)
		}
		return s
	case reverted != "":
		return "reverts " + reverted
	case errText != "":
		return clip(errText, 70)
	case e.Reason != nil:
		return clip(*e.Reason, 70)
	}
	return "-"
}

// clip shortens s to n runes on one line, marking the cut.
func clip(s string, n int) string { return supersession.Clip(s, n) }

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
