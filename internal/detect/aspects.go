package detect

import (
	"bytes"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"
	"time"

	"github.com/supersessiond/supersessiond/internal/supersession"
)

// aspectWire is one line of `eval --aspects` (SPEC §12): a whole aspect,
// its statements, and every ordered pair whose newer statement retires the
// older.
type aspectWire struct {
	AspectID   string          `json:"aspect_id"`
	Entity     string          `json:"entity"`
	Aspect     string          `json:"aspect"`
	Style      string          `json:"style"`
	Statements []statementWire `json:"statements"`
	Supersedes [][]string      `json:"supersedes"`
	Ambiguous  [][]string      `json:"ambiguous"`
}

type statementWire struct {
	ID   string  `json:"id"`
	Text *string `json:"text"`
	At   string  `json:"at"`
	Kind string  `json:"kind"`
}

// Aspect is a parsed line: its statements as the engine's attributes,
// oldest first, and the labels.
type Aspect struct {
	ID, Entity, Name, Style string
	Attrs                   []*supersession.Attribute
	// Truth and Ambiguous hold ordered pairs (older id, newer id).
	Truth, Ambiguous map[[2]string]bool
}

// ParseAspect parses one non-blank line of an aspects file. Statements
// without "at" take the order they are listed in; either all have one or
// none does.
func ParseAspect(line []byte) (*Aspect, error) {
	var w aspectWire
	dec := json.NewDecoder(bytes.NewReader(line))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&w); err != nil {
		return nil, fmt.Errorf("invalid JSON: %s", jsonError(err))
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, errors.New("invalid JSON: more than one value on the line")
	}
	if w.AspectID == "" {
		return nil, errors.New(`missing "aspect_id"`)
	}
	a := &Aspect{ID: w.AspectID, Entity: w.Entity, Name: w.Aspect, Style: w.Style,
		Truth: map[[2]string]bool{}, Ambiguous: map[[2]string]bool{}}
	if err := a.readStatements(w.Statements); err != nil {
		return nil, fmt.Errorf("aspect %s: %w", w.AspectID, err)
	}
	if err := a.readPairs("supersedes", w.Supersedes, a.Truth); err != nil {
		return nil, fmt.Errorf("aspect %s: %w", w.AspectID, err)
	}
	if err := a.readPairs("ambiguous", w.Ambiguous, a.Ambiguous); err != nil {
		return nil, fmt.Errorf("aspect %s: %w", w.AspectID, err)
	}
	return a, nil
}

// internalID names a statement uniquely in a file (statement ids need only
// be unique within their aspect, and --scope merges aspects).
func (a *Aspect) internalID(id string) string { return a.ID + "\x1f" + id }

// statementID is the id a line gave a statement.
func statementID(internal string) string {
	_, id, _ := strings.Cut(internal, "\x1f")
	return id
}

// listedOrigin is the time of the first statement of an aspect whose
// statements carry no "at": the order they are listed in is their order.
var listedOrigin = time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)

func (a *Aspect) readStatements(ss []statementWire) error {
	if len(ss) == 0 {
		return errors.New(`no "statements"`)
	}
	seen := map[string]bool{}
	timed := ss[0].At != ""
	for i, s := range ss {
		switch {
		case s.ID == "":
			return fmt.Errorf("statement %d: missing \"id\"", i+1)
		case seen[s.ID]:
			return fmt.Errorf("statement %s: id listed twice", s.ID)
		case s.Text == nil:
			return fmt.Errorf("statement %s: missing \"text\"", s.ID)
		case (s.At != "") != timed:
			return fmt.Errorf("statement %s: either every statement has \"at\" or none does", s.ID)
		}
		seen[s.ID] = true
		kind, err := parseKind("kind", s.Kind)
		if err != nil {
			return fmt.Errorf("statement %s: %w", s.ID, err)
		}
		at := listedOrigin.Add(time.Duration(i) * time.Hour)
		if timed {
			if at, err = parseTime("at", s.At); err != nil {
				return fmt.Errorf("statement %s: %w", s.ID, err)
			}
		}
		a.Attrs = append(a.Attrs, &supersession.Attribute{
			ID: a.internalID(s.ID), AgentID: "eval", AspectID: a.ID, Kind: supersession.Kind(kind),
			Content: nullString(*s.Text), CreatedAt: at,
		})
	}
	return nil
}

func (a *Aspect) readPairs(field string, pairs [][]string, into map[[2]string]bool) error {
	at := map[string]time.Time{}
	for _, s := range a.Attrs {
		at[s.ID] = s.CreatedAt
	}
	for _, p := range pairs {
		if len(p) != 2 {
			return fmt.Errorf("%s: %v is not a pair [older id, newer id]", field, p)
		}
		o, ok1 := at[a.internalID(p[0])]
		n, ok2 := at[a.internalID(p[1])]
		switch {
		case !ok1 || !ok2:
			return fmt.Errorf("%s: [%s, %s] names a statement the aspect does not list", field, p[0], p[1])
		case !n.After(o):
			return fmt.Errorf("%s: [%s, %s]: the newer is not newer than the older", field, p[0], p[1])
		}
		into[[2]string{a.internalID(p[0]), a.internalID(p[1])}] = true
	}
	return nil
}

// AspectOptions configures EvaluateAspects.
type AspectOptions struct {
	Min, Review float64
	// Scope merges each entity's aspects into one group and withholds the
	// aspects' names, as a store without aspects (a Honcho peer, a mem0
	// user) is decided: the pairs across aspects are all false.
	Scope bool
	// LLM, when set, judges what the heuristics leave, as the daemon's
	// semantic fallback would (`eval --llm`).
	LLM *LLMJudge
}

// ReadAspects reads an aspects file; a line that cannot be read is an
// error of the report, and reading goes on.
func ReadAspects(r io.Reader) (aspects []*Aspect, lineErrors []string, err error) {
	ids := map[string]bool{}
	err = Lines(r, func(n int, line []byte, tooLong bool) error {
		if tooLong {
			lineErrors = append(lineErrors, fmt.Sprintf("line %d: longer than %d bytes", n, MaxLineBytes))
			return nil
		}
		a, err := ParseAspect(line)
		if err == nil && ids[a.ID] {
			err = fmt.Errorf("aspect %s: listed twice", a.ID)
		}
		if err != nil {
			lineErrors = append(lineErrors, fmt.Sprintf("line %d: %v", n, err))
			return nil
		}
		ids[a.ID] = true
		aspects = append(aspects, a)
		return nil
	})
	return aspects, lineErrors, err
}

// groupsOf makes the groups a sweep would decide: one per aspect, or with
// Scope one per entity, its aspects merged and unnamed.
func groupsOf(aspects []*Aspect, scope bool) []*supersession.Group {
	var groups []*supersession.Group
	byEntity := map[string]*supersession.Group{}
	for _, a := range aspects {
		attrs := make([]*supersession.Attribute, len(a.Attrs))
		for i, s := range a.Attrs {
			c := *s
			attrs[i] = &c
		}
		if !scope {
			g := &supersession.Group{AgentID: "eval", AspectID: a.ID, Attrs: attrs}
			g.Name(a.Name)
			groups = append(groups, g)
			continue
		}
		entity := a.Entity
		if entity == "" {
			entity = "aspect " + a.ID
		}
		g := byEntity[entity]
		if g == nil {
			g = &supersession.Group{AgentID: "eval", AspectID: "scope " + entity}
			byEntity[entity] = g
			groups = append(groups, g)
		}
		for _, s := range attrs {
			s.AspectID = g.AspectID
		}
		g.Attrs = append(g.Attrs, attrs...)
	}
	return groups
}

func nullString(s string) sql.NullString { return sql.NullString{String: s, Valid: true} }

// styleOf names the style of a line for the breakdown.
func styleOf(a *Aspect) string {
	if s := strings.TrimSpace(a.Style); s != "" {
		return s
	}
	return "(none)"
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
