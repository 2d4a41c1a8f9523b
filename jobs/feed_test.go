package jobs_test

// The change feed's invariants (supersession.Feed), run against both of
// its readers: the incremental sweep, which claims change records, and the
// inline hook, which reads the records of the aspects it classifies into.
// Each reader examines what is recorded when told to (read); the tests
// classify, edit and refuse around it.

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/supersessiond/supersessiond/config"
	"github.com/supersessiond/supersessiond/daemon"
	"github.com/supersessiond/supersessiond/internal/store"
	"github.com/supersessiond/supersessiond/internal/supersession"
	"github.com/supersessiond/supersessiond/internal/testkit/memtest"
	"github.com/supersessiond/supersessiond/internal/testkit/pgtest"
	"github.com/supersessiond/supersessiond/jobs"
	"github.com/supersessiond/supersessiond/jobs/inline"
	"github.com/supersessiond/supersessiond/jobs/sweep"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// reader is one reader of the change feed.
type reader interface {
	// read examines what is recorded now, until nothing is left.
	read(ctx context.Context) error
	// onExamine tells f each aspect a batch decides, after its reads.
	onExamine(f func(agent, aspect string))
}

type sweepReader struct{ j *sweep.Job }

func (r sweepReader) read(ctx context.Context) error {
	_, err := r.j.Run(ctx, daemon.SettingsOf(config.Default()).Sweep)
	return err
}
func (r sweepReader) onExamine(f func(agent, aspect string)) { r.j.OnExamine(f) }

type hookReader struct {
	h   *inline.Hook
	cfg inline.Settings
}

func (r hookReader) read(ctx context.Context) error         { return r.h.Drain(ctx, r.cfg) }
func (r hookReader) onExamine(f func(agent, aspect string)) { r.h.OnExamine(f) }

func deps(db *pgtest.DB) jobs.Deps {
	return jobs.Deps{DB: db.DB, Logger: slog.New(slog.DiscardHandler), Registry: prometheus.NewRegistry()}
}

// readers are the feed's two readers, each built on a database.
var readers = []struct {
	name string
	open func(db *pgtest.DB) reader
}{
	{"sweep", func(db *pgtest.DB) reader {
		d := deps(db)
		j := sweep.New(d, supersession.New(d))
		j.BatchAspects = 3
		return sweepReader{j}
	}},
	{"inline", func(db *pgtest.DB) reader {
		d := deps(db)
		cfg := config.Default()
		cfg.Maintenance.Database.URL = db.URL
		return hookReader{inline.New(d, supersession.New(d)), daemon.SettingsOf(cfg).Inline}
	}},
}

// swept is a database whose agent a has an aspect of fifty facts that hold
// together and "Lives in Toronto", after a complete full pass: its key
// digest stored, nothing recorded, nothing waiting in the outbox.
func swept(t *testing.T) (*pgtest.DB, *memtest.Seeder, string) {
	t.Helper()
	db := pgtest.New(t)
	s := memtest.New(t, db.DB)
	asp := s.Aspect("a", "Sam", "life")
	for i := range 50 {
		s.Add(memtest.Attr{ID: fmt.Sprintf("f%02d", i), Agent: "a", Aspect: asp,
			Content: fmt.Sprintf("Visited city number %d in %d", i, 1990+i%30)})
	}
	s.Add(memtest.Attr{ID: "toronto", Agent: "a", Aspect: asp, Content: "Lives in Toronto"})
	d := deps(db)
	if rep, err := sweep.New(d, supersession.New(d)).Run(t.Context(), daemon.SettingsOf(config.Default()).Sweep); err != nil || !rep.(*sweep.Report).Complete {
		t.Fatalf("full pass: %v %+v", err, rep)
	}
	s.Exec(`DELETE FROM supersessiond.classified`)
	if n := s.Count(`SELECT count(*) FROM supersessiond.aspect_keys WHERE aspect_id = $1`, asp); n != 1 {
		t.Fatalf("%d key digests after the full pass, want 1", n)
	}
	return db, s, asp
}

// classify adds an attribute of agent a and classifies it into aspect, as
// the agent's classifier does: the trigger records the change and fills
// the hook's outbox.
func classify(s *memtest.Seeder, aspect, id, content string) {
	s.Add(memtest.Attr{ID: id, Agent: "a", Content: content})
	s.Exec(`UPDATE entity_attributes SET aspect_id = $1 WHERE id = $2`, aspect, id)
}

func records(s *memtest.Seeder, id string) int {
	return s.Count(`SELECT count(*) FROM supersessiond.changes WHERE attribute_id = $1`, id)
}

func fragments(s *memtest.Seeder, aspect string) int {
	return s.Count(`SELECT count(*) FROM supersessiond.aspect_keys WHERE aspect_id = $1`, aspect)
}

// refuse makes every insert into table fail with SQLSTATE code until the
// returned function is called.
func refuse(s *memtest.Seeder, table, code string) (lift func()) {
	s.Exec(fmt.Sprintf(`CREATE FUNCTION refuse() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN RAISE EXCEPTION 'refused by the test' USING ERRCODE = '%s'; END $$`, code))
	s.Exec(`CREATE TRIGGER refuse BEFORE INSERT ON ` + table + ` FOR EACH ROW EXECUTE FUNCTION refuse()`)
	return func() { s.Exec(`DROP TRIGGER refuse ON ` + table + `; DROP FUNCTION refuse()`) }
}

// A change's record is consumed only in the transaction that stores the
// keys that let the next reader find its attribute: when storing the keys
// fails, the record stays; once stored, a later change that meets the
// attribute only through them is decided against it.
func TestFeedConsumesAChangeOnlyWithItsKeys(t *testing.T) {
	t.Parallel()
	for _, rd := range readers {
		t.Run(rd.name, func(t *testing.T) {
			t.Parallel()
			db, s, asp := swept(t)
			r := rd.open(db)

			lift := refuse(s, "supersessiond.aspect_keys", "P0001")
			classify(s, asp, "calgary", "Lives in Calgary")
			if err := r.read(t.Context()); err == nil {
				t.Fatal("a read whose keys could not be stored reported no error")
			}
			if n := records(s, "calgary"); n != 1 {
				t.Fatalf("%d change records of calgary after its keys failed to be stored, want 1", n)
			}
			if n := fragments(s, asp); n != 1 {
				t.Fatalf("%d key digests, want the full pass's alone", n)
			}
			lift()
			if err := r.read(t.Context()); err != nil {
				t.Fatal(err)
			}
			if n := records(s, "calgary"); n != 0 {
				t.Fatalf("%d change records of calgary once decided, want 0", n)
			}
			if st, by := s.Status("toronto"); st != "superseded" || by != "calgary" {
				t.Fatalf("toronto: %s by %q", st, by)
			}
			if n := fragments(s, asp); n != 2 {
				t.Fatalf("%d key digests, want 2 (the full pass's and calgary's fragment)", n)
			}

			// An older fact edited into a home: only calgary's stored keys
			// meet it (a poke classifies into the aspect for the hook).
			s.Exec(`UPDATE entity_attributes SET content = 'Lives in Regina' WHERE id = 'f10'`)
			classify(s, asp, "poke", "Collects stamps")
			if err := r.read(t.Context()); err != nil {
				t.Fatal(err)
			}
			if st, by := s.Status("f10"); st != "superseded" || by != "calgary" {
				t.Fatalf("f10: %s by %q, want superseded by calgary through its stored keys", st, by)
			}
			if n := fragments(s, asp); n != 3 {
				t.Fatalf("%d key digests, want 3: the aspect was not narrowed through them", n)
			}
		})
	}
}

// A change committed while a reader examines its aspect is not consumed
// with the batch (the snapshot did not see it): the next read decides it.
func TestFeedLosesNoChangeMadeDuringARead(t *testing.T) {
	t.Parallel()
	for _, rd := range readers {
		t.Run(rd.name, func(t *testing.T) {
			t.Parallel()
			db, s, asp := swept(t)
			r := rd.open(db)
			classify(s, asp, "calgary", "Lives in Calgary")
			edited := false
			r.onExamine(func(_, aspect string) {
				if aspect == asp && !edited {
					edited = true // the batch read calgary; its decision's guard finds it changed
					s.Exec(`UPDATE entity_attributes SET content = 'Lives in Regina' WHERE id = 'calgary'`)
				}
			})
			if err := r.read(t.Context()); err != nil {
				t.Fatal(err)
			}
			if !edited {
				t.Fatal("the reader never examined the aspect")
			}
			if st, _ := s.Status("toronto"); st != "active" {
				t.Fatalf("toronto is %s after the read during which calgary changed", st)
			}
			if n := records(s, "calgary"); n != 1 {
				t.Fatalf("%d change records of calgary, want 1: the edit made during the read", n)
			}
			r.onExamine(nil)
			classify(s, asp, "poke", "Collects stamps")
			if err := r.read(t.Context()); err != nil {
				t.Fatal(err)
			}
			if st, by := s.Status("toronto"); st != "superseded" || by != "calgary" {
				t.Fatalf("toronto: %s by %q, want superseded by calgary as edited", st, by)
			}
		})
	}
}

// Two readers at once never examine one change twice, and between them
// examine every one.
func TestFeedTwoReadersNeverExamineOneChangeTwice(t *testing.T) {
	t.Parallel()
	for _, rd := range readers {
		t.Run(rd.name, func(t *testing.T) {
			t.Parallel()
			db := pgtest.New(t)
			s := memtest.New(t, db.DB)
			aspects := s.Moves("a", "p", 30, "Toronto")
			d := deps(db)
			if _, err := sweep.New(d, supersession.New(d)).Run(t.Context(), daemon.SettingsOf(config.Default()).Sweep); err != nil {
				t.Fatal(err)
			}
			s.Exec(`DELETE FROM supersessiond.classified`)
			for i, asp := range aspects {
				classify(s, asp, fmt.Sprintf("p%d-2", i), "Lives in Halifax")
			}
			var mu sync.Mutex
			seen := make([][]string, 2)
			var wg sync.WaitGroup
			for i := range 2 {
				r := rd.open(db)
				r.onExamine(func(agent, aspect string) {
					mu.Lock()
					defer mu.Unlock()
					seen[i] = append(seen[i], aspect)
				})
				wg.Go(func() {
					if err := r.read(context.Background()); err != nil {
						t.Error(err)
					}
				})
			}
			wg.Wait()
			for _, asp := range seen[0] {
				if slices.Contains(seen[1], asp) {
					t.Errorf("aspect %s examined by both readers", asp)
				}
			}
			if n := len(seen[0]) + len(seen[1]); n != len(aspects) {
				t.Errorf("%d aspects examined, want %d", n, len(aspects))
			}
			if n := s.Count(`SELECT count(*) FROM memory_history WHERE event = 'attribute_superseded'`); n != len(aspects) {
				t.Errorf("%d supersessions, want %d", n, len(aspects))
			}
			if n := s.Count(`SELECT count(*) FROM supersessiond.changes`); n != 0 {
				t.Errorf("%d change records left", n)
			}
		})
	}
}

// A write the server refuses as a whole (too many connections, disk full,
// out of memory: a trigger raising that SQLSTATE) fails the read, which
// consumes nothing and stores no key; once the server takes writes, the
// change is decided.
func TestFeedConsumesNothingWhenTheServerRefuses(t *testing.T) {
	t.Parallel()
	for _, rd := range readers {
		for _, code := range []string{"53300", "53100", "53200"} {
			t.Run(rd.name+"/"+code, func(t *testing.T) {
				t.Parallel()
				db, s, asp := swept(t)
				r := rd.open(db)
				lift := refuse(s, "memory_history", code)
				classify(s, asp, "calgary", "Lives in Calgary")
				err := r.read(t.Context())
				if err == nil || !store.Transient(err) {
					t.Fatalf("want the server's refusal, got %v", err)
				}
				var pe interface{ SQLState() string }
				if errors.As(err, &pe) && pe.SQLState() != code {
					t.Fatalf("refused with %s, want %s", pe.SQLState(), code)
				}
				if n := records(s, "calgary"); n != 1 {
					t.Fatalf("%d change records of calgary after the refusal, want 1", n)
				}
				if n := fragments(s, asp); n != 1 {
					t.Fatalf("%d key digests after the refusal, want the full pass's alone", n)
				}
				if n := s.Count(`SELECT count(*) FROM supersessiond.changes WHERE claimed_by IS NOT NULL`); n != 0 {
					t.Fatalf("%d change records still claimed after the refusal", n)
				}
				lift()
				if err := r.read(t.Context()); err != nil {
					t.Fatal(err)
				}
				if st, by := s.Status("toronto"); st != "superseded" || by != "calgary" {
					t.Fatalf("toronto: %s by %q", st, by)
				}
				if n := records(s, "calgary"); n != 0 {
					t.Fatalf("%d change records of calgary once decided", n)
				}
			})
		}
	}
}
