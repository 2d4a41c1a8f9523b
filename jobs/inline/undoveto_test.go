package inline_test

import (
	"testing"
	"time"

	"github.com/supersessiond/supersessiond/internal/testkit/memtest"
	"github.com/supersessiond/supersessiond/internal/testkit/pgtest"
)

// An undo vetoes the restored attribute against every sibling recorded at
// or before it, in the hook as in the sweep: a sibling classified after the
// undo but recorded before it does not retire it; one recorded after the
// undo does.
func TestUndoVetoesEarlierSiblingsInline(t *testing.T) {
	t.Parallel()
	db := pgtest.New(t)
	s := memtest.New(t, db.DB)
	asp := s.Aspect("a", "Sam", "home")
	s.Add(
		memtest.Attr{ID: "u1", Agent: "a", Aspect: asp, Content: "Lives in Toronto"},
		memtest.Attr{ID: "u2", Agent: "a", Content: "Lives in Saskatoon"},
		memtest.Attr{ID: "u3", Agent: "a", Content: "Lives in Halifax", At: time.Now().Add(time.Minute)},
	)
	s.Exec(`INSERT INTO memory_history (id, memory_id, event, changed_by, metadata) VALUES
		('rev', 'u1', 'supersession_reverted', 'supersessiond:cli', '{"agent_id":"a","reverted_history_id":"h","old_attribute_id":"u1","new_attribute_id":"u0"}')`)
	startHook(t, db, cfgWithPoll(time.Hour, db.URL))
	s.Exec(`UPDATE entity_attributes SET aspect_id = $1 WHERE id = 'u2'`, asp)
	eventually(t, "classification handled", func() bool { return s.Count(`SELECT count(*) FROM supersessiond.classified`) == 0 })
	if st, by := s.Status("u1"); st != "active" {
		t.Fatalf("u1 is %s by %q: the hook retired an undone attribute with a sibling recorded before the undo", st, by)
	}
	s.Exec(`UPDATE entity_attributes SET aspect_id = $1 WHERE id = 'u3'`, asp)
	eventually(t, "u1 superseded by u3, recorded after the undo", func() bool {
		st, by := s.Status("u1")
		return st == "superseded" && by == "u3"
	})
}
