package tombstones_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/supersessiond/supersessiond/internal/testkit/pgtest"
)

// Each case is a small world and what one pass must make of it. T is the
// tombstone under test throughout.
var triageCases = []struct {
	name string
	docs []doc
	want map[string]outcome
}{
	{
		name: "superseded and cited by a live document of its workspace: preserved",
		docs: []doc{
			{id: "T", deleted: "old", superseded: true},
			{id: "D", sources: `["T"]`},
		},
		want: map[string]outcome{"T": preserved, "D": live},
	},
	{
		name: "cited only from another workspace: not a dependent, deleted",
		docs: []doc{
			{id: "T", ws: "ws-a", deleted: "old", superseded: true},
			{id: "D", ws: "ws-b", sources: `["T"]`},
		},
		want: map[string]outcome{"T": gone, "D": live},
	},
	{
		name: "the only dependent is itself soft-deleted: not live, both deleted",
		docs: []doc{
			{id: "T", deleted: "old", superseded: true},
			{id: "D", deleted: "old", sources: `["T"]`},
		},
		want: map[string]outcome{"T": gone, "D": gone},
	},
	{
		name: "the only dependent was soft-deleted too recently to triage: still not live",
		docs: []doc{
			{id: "T", deleted: "old", superseded: true},
			{id: "D", deleted: "young", sources: `["T"]`},
		},
		want: map[string]outcome{"T": gone, "D": pending},
	},
	{
		name: "the only dependent is a preserved-to-be tombstone: not live",
		docs: []doc{
			{id: "T", deleted: "old", superseded: true},
			{id: "U", deleted: "old", superseded: true, sources: `["T"]`},
			{id: "D", sources: `["U"]`},
		},
		want: map[string]outcome{"T": gone, "U": preserved, "D": live},
	},
	{
		name: "not superseded: hard-deleted even when cited",
		docs: []doc{
			{id: "T", deleted: "old"},
			{id: "D", sources: `["T"]`},
		},
		want: map[string]outcome{"T": gone, "D": live},
	},
	{
		name: "superseded, cited by nobody: deleted",
		docs: []doc{
			{id: "T", deleted: "old", superseded: true},
			{id: "D", sources: `["X"]`},
		},
		want: map[string]outcome{"T": gone, "D": live},
	},
	{
		name: "younger than minAge: untouched, whatever it is",
		docs: []doc{
			{id: "T", deleted: "young", superseded: true},
			{id: "T2", deleted: "young"},
			{id: "D", sources: `["T"]`},
		},
		want: map[string]outcome{"T": pending, "T2": pending, "D": live},
	},
	{
		name: "citing itself does not count",
		docs: []doc{
			{id: "T", deleted: "old", superseded: true, sources: `["T"]`},
		},
		want: map[string]outcome{"T": gone},
	},
	{
		name: "one live dependent among dead ones is enough",
		docs: []doc{
			{id: "T", deleted: "old", superseded: true},
			{id: "D1", deleted: "old", sources: `["T"]`},
			{id: "D2", ws: "ws-b", sources: `["T"]`},
			{id: "D3", sources: `["A", "T", "B"]`},
		},
		want: map[string]outcome{"T": preserved, "D1": gone, "D2": live, "D3": live},
	},
	{
		name: "several tombstones cited by one document",
		docs: []doc{
			{id: "T1", deleted: "old", superseded: true},
			{id: "T2", deleted: "old", superseded: true},
			{id: "T3", deleted: "old"},
			{id: "D", sources: `["T1", "T2", "T3"]`},
		},
		want: map[string]outcome{"T1": preserved, "T2": preserved, "T3": gone, "D": live},
	},
	// Malformed source_ids on live documents: never an error; a citation is
	// a top-level string (array element, bare string, object key).
	{
		name: "malformed source_ids: object keyed by the id counts",
		docs: []doc{{id: "T", deleted: "old", superseded: true}, {id: "D", sources: `{"T": 0.9}`}},
		want: map[string]outcome{"T": preserved},
	},
	{
		name: "malformed source_ids: a bare string counts",
		docs: []doc{{id: "T", deleted: "old", superseded: true}, {id: "D", sources: `"T"`}},
		want: map[string]outcome{"T": preserved},
	},
	{
		name: "malformed source_ids: mixed array, the string element counts",
		docs: []doc{{id: "T", deleted: "old", superseded: true}, {id: "D", sources: `[1, null, {"x": 1}, "T"]`}},
		want: map[string]outcome{"T": preserved},
	},
	{
		name: "malformed source_ids: nested, numeric, null, empty and object values do not count",
		docs: []doc{
			{id: "T", deleted: "old", superseded: true},
			{id: "D1", sources: `[["T"]]`},
			{id: "D2", sources: `{"refs": ["T"], "x": "T"}`},
			{id: "D3", sources: `42`},
			{id: "D4", sources: `null`},
			{id: "D5", sources: `[]`},
			{id: "D6", sources: `{}`},
			{id: "D7", sources: `true`},
			{id: "D8", sources: ``},
			{id: "D9", sources: `[{"id": "T"}]`},
		},
		want: map[string]outcome{"T": gone, "D1": live, "D9": live},
	},
	{
		name: "odd ids and workspace names are data, not syntax",
		docs: []doc{
			{id: `T'"; DROP TABLE documents; --`, ws: "ws ü 🚀", deleted: "old", superseded: true},
			{id: "D", ws: "ws ü 🚀", sources: `["T'\"; DROP TABLE documents; --"]`},
			{id: "", ws: "ws ü 🚀", deleted: "old", superseded: true},
			{id: "E", ws: "ws ü 🚀", sources: `[""]`},
		},
		want: map[string]outcome{`T'"; DROP TABLE documents; --`: preserved, "": preserved, "D": live, "E": live},
	},
}

func TestTriageRules(t *testing.T) {
	t.Parallel()
	for _, tc := range triageCases {
		for _, batch := range []int{1, 500} {
			t.Run(tc.name+"/batch="+itoa(batch), func(t *testing.T) {
				t.Parallel()
				db := pgtest.New(t)
				world(t, db.DB, tc.docs...)
				pass(t, db.DB, testConfig(batch))
				if d := diff(t, db.DB, tc.want); d != "" {
					t.Fatalf("after one pass:\n%s", d)
				}
				// The independent oracle agrees on the starting world too.
				db2 := pgtest.New(t)
				world(t, db2.DB, tc.docs...)
				if d := diff(t, db.DB, oracle(t, db2.DB, testConfig(1).Maintenance.Tombstones.MinAge)); d != "" {
					t.Fatalf("pass and oracle disagree:\n%s", d)
				}
			})
		}
	}
}

// One world holding every case at once, run with batch sizes that cut it
// everywhere: the result is the same whatever the batch boundaries.
func TestBatchBoundariesDoNotMatter(t *testing.T) {
	t.Parallel()
	var all []doc
	want := map[string]outcome{}
	for i, tc := range triageCases {
		prefix := "c" + itoa(i) + "-"
		for _, d := range tc.docs {
			d.id = prefix + d.id
			d.ws = prefix + d.ws
			d.sources = prefixSources(d.sources, prefix)
			all = append(all, d)
		}
		for id, o := range tc.want {
			want[prefix+id] = o
		}
	}
	for _, batch := range []int{1, 2, 3, 5, 7, 11, 64, 100000} {
		t.Run("batch="+itoa(batch), func(t *testing.T) {
			t.Parallel()
			db := pgtest.New(t)
			world(t, db.DB, all...)
			r := pass(t, db.DB, testConfig(batch))
			if d := diff(t, db.DB, want); d != "" {
				t.Fatalf("batch size %d:\n%s", batch, d)
			}
			wantBatches := (r.Examined + batch - 1) / batch
			if r.Batches != wantBatches || r.Preserved+r.Deleted != r.Examined {
				t.Fatalf("report: %d batches for %d examined at %d a batch (want %d); %d preserved + %d deleted",
					r.Batches, r.Examined, batch, wantBatches, r.Preserved, r.Deleted)
			}
		})
	}
}

// prefixSources prefixes every string and object key inside a source_ids
// literal, so that cases do not see each other's documents: "T" -> "c3-T".
// Strings that are not ids of the world stay ids of nothing.
func prefixSources(src, prefix string) string {
	if src == "" {
		return ""
	}
	dec := json.NewDecoder(strings.NewReader(src))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		panic(err)
	}
	var walk func(v any) any
	walk = func(v any) any {
		switch v := v.(type) {
		case string:
			return prefix + v
		case []any:
			for i := range v {
				v[i] = walk(v[i])
			}
			return v
		case map[string]any:
			m := make(map[string]any, len(v))
			for k, e := range v {
				m[prefix+k] = walk(e)
			}
			return m
		}
		return v
	}
	b, err := json.Marshal(walk(v))
	if err != nil {
		panic(err)
	}
	return string(b)
}

func itoa(i int) string {
	const digits = "0123456789"
	if i == 0 {
		return "0"
	}
	var b []byte
	for ; i > 0; i /= 10 {
		b = append([]byte{digits[i%10]}, b...)
	}
	return string(b)
}
