// Package memtest builds agent memory rows for tests: entities, aspects and
// attributes with explicit creation times, in a few readable lines.
package memtest

import (
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jmoiron/sqlx"
)

// Base is the creation time of the first attribute; later ones add Step.
var Base = time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)

// Step separates consecutive attributes: more than a day, so temporal
// supersession signals may fire.
const Step = 36 * time.Hour

// Seeder inserts rows into one test database. It may be used from several
// goroutines at once (the fault tests seed while daemons run).
type Seeder struct {
	t  testing.TB
	db *sqlx.DB
	n  atomic.Int64
}

// New returns a Seeder.
func New(t testing.TB, db *sqlx.DB) *Seeder { return &Seeder{t: t, db: db} }

// Exec runs a statement or fails the test.
func (s *Seeder) Exec(q string, args ...any) {
	s.t.Helper()
	if _, err := s.db.Exec(q, args...); err != nil {
		s.t.Fatalf("memtest: %v\n%s", err, q)
	}
}

// Aspect creates (if needed) entity and aspect rows for agent and returns
// the aspect id, "<agent>:<entity>:<aspect>".
func (s *Seeder) Aspect(agent, entity, aspect string) string {
	s.t.Helper()
	eid := agent + ":" + entity
	aid := eid + ":" + aspect
	s.Exec(`INSERT INTO entities (id, agent_id, name) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING`, eid, agent, entity)
	s.Exec(`INSERT INTO entity_aspects (id, entity_id, agent_id, name, canonical_name) VALUES ($1, $2, $3, $4, $4) ON CONFLICT DO NOTHING`,
		aid, eid, agent, aspect)
	return aid
}

// Attr is an attribute to insert.
type Attr struct {
	ID        string
	Agent     string
	Aspect    string // "" leaves it unclassified
	Kind      string // default attribute
	Content   string
	At        time.Time // default: Base + n*Step
	Protected bool
	MemoryID  string
}

// Add inserts attributes in order; those without At get increasing times.
func (s *Seeder) Add(attrs ...Attr) {
	s.t.Helper()
	for _, a := range attrs {
		n := s.n.Add(1)
		if a.Kind == "" {
			a.Kind = "attribute"
		}
		if a.At.IsZero() {
			a.At = Base.Add(time.Duration(n) * Step)
		}
		var aspect, memory any
		if a.Aspect != "" {
			aspect = a.Aspect
		}
		if a.MemoryID != "" {
			s.Exec(`INSERT INTO memories (id, agent_id, content) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING`, a.MemoryID, a.Agent, a.Content)
			memory = a.MemoryID
		}
		s.Exec(`INSERT INTO entity_attributes (id, aspect_id, agent_id, memory_id, kind, content, normalized_content, protected, created_at, updated_at)
			VALUES ($1, $2, $3, $4, $5, $6, lower($6), $7, $8, $8)`, a.ID, aspect, a.Agent, memory, a.Kind, a.Content, a.Protected, a.At)
	}
}

// Moves creates n aspects of agent (entities <prefix>0..n-1, aspect
// "home"), each holding one "Lives in <city>" attribute per city, in order:
// a chain of real contradictions. Attribute ids are <prefix><i>-<k>, k
// counting cities from 1. It returns the aspect ids.
func (s *Seeder) Moves(agent, prefix string, n int, cities ...string) []string {
	s.t.Helper()
	aspects := make([]string, n)
	for i := range n {
		aspects[i] = s.Aspect(agent, fmt.Sprintf("%s%d", prefix, i), "home")
		for k, city := range cities {
			s.Add(Attr{ID: fmt.Sprintf("%s%d-%d", prefix, i, k+1), Agent: agent, Aspect: aspects[i], Content: "Lives in " + city})
		}
	}
	return aspects
}

// Status returns an attribute's status and superseded_by ("" when NULL).
func (s *Seeder) Status(id string) (status, supersededBy string) {
	s.t.Helper()
	var by *string
	if err := s.db.QueryRow(`SELECT status, superseded_by FROM entity_attributes WHERE id = $1`, id).Scan(&status, &by); err != nil {
		s.t.Fatalf("memtest: status of %s: %v", id, err)
	}
	if by != nil {
		supersededBy = *by
	}
	return status, supersededBy
}

// Count runs a count query.
func (s *Seeder) Count(q string, args ...any) int {
	s.t.Helper()
	var n int
	if err := s.db.Get(&n, q, args...); err != nil {
		s.t.Fatalf("memtest: %v\n%s", err, q)
	}
	return n
}
