package sweep_test

import (
	"testing"

	"github.com/supersessiond/supersessiond/internal/testkit/memtest"
	"github.com/supersessiond/supersessiond/internal/testkit/pgtest"
	"github.com/supersessiond/supersessiond/jobs/sweep"
)

// The aspect's name is part of what the analysis reads, in a narrowed
// pass as in the full pass that stored the aspect's keys: in an aspect
// about someone's job, "Joined Sutter Health" fills the employer slot that
// "Works at Kaiser" holds, and its keys meet that attribute's only when it
// is read under the name.
func TestNarrowedPassReadsUnderTheAspectName(t *testing.T) {
	t.Parallel()
	db := pgtest.New(t)
	s := memtest.New(t, db.DB)
	aspect := s.Aspect("a", "Sam", "job")
	addVisits(s, aspect, 40)
	s.Add(memtest.Attr{ID: "kaiser", Agent: "a", Aspect: aspect, Content: "Works at Kaiser"})
	j := newJob(db.DB, nil)
	if r := run(t, j, live()); r.Kind != sweep.KindFull || !r.Complete || r.Supersessions != 0 {
		t.Fatalf("first run: want a complete full pass and no supersession: %+v", r)
	}
	s.Add(memtest.Attr{ID: "sutter", Agent: "a", Aspect: aspect, Content: "Joined Sutter Health"})
	r := run(t, j, live())
	if r.Kind != sweep.KindIncremental || r.Narrowed != 1 || r.Supersessions != 1 {
		t.Fatalf("after the new job: want one narrowed aspect and one supersession: %+v", r)
	}
	if st, by := s.Status("kaiser"); st != "superseded" || by != "sutter" {
		t.Fatalf("kaiser: %s by %q, want superseded by sutter", st, by)
	}
}
