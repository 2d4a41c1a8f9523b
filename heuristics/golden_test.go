package heuristics

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"flag"
	"fmt"
	"hash"
	"math"
	"os"
	"strings"
	"testing"
)

var (
	update     = flag.Bool("update", false, "rewrite testdata/decisions.sum from the current decisions")
	corpusOnly = flag.Bool("corpus-only", false, "with -update: the corpora changed, the decisions did not (Version stays)")
)

// TestDecisionsUnchanged pins every decision between statements of both
// corpora (each statement as the older one against every statement as the
// newer one: 640,000 decisions, with their confidences, signals, details
// and reasons, and SharedContentTokens) to testdata/decisions.sum, one
// digest per older statement. Work on speed must leave it unchanged; a
// deliberate change of the heuristics is checked with supersessiond eval
// and then recorded with go test ./heuristics -run DecisionsUnchanged -update,
// which refuses unless Version was bumped too (the sweep runs a full pass
// when it changes); after growing the corpora alone, add -corpus-only.
func TestDecisionsUnchanged(t *testing.T) {
	t.Parallel()
	ins := corpusInputs(t)
	st := make([]*Statement, len(ins))
	for i, in := range ins {
		st[i] = Analyze(in)
	}
	var got bytes.Buffer
	fmt.Fprintf(&got, "version %s\n", Version)
	h := sha256.New()
	for i := range st {
		h.Reset()
		for j := range st {
			d := DecideAnalyzed(st[i], st[j])
			if (i+j)%13 == 0 {
				d = Decide(ins[i], ins[j]) // the raw form must agree
			}
			digestDecision(h, d, SharedContentTokens(st[i], st[j]))
		}
		fmt.Fprintf(&got, "%x %q\n", h.Sum(nil)[:12], ins[i].Content)
	}
	const name = "testdata/decisions.sum"
	want, err := os.ReadFile(name)
	if err != nil && !*update {
		t.Fatal(err)
	}
	if *update {
		old, _, _ := bytes.Cut(want, []byte("\n"))
		if string(old) == "version "+Version && !bytes.Equal(got.Bytes(), want) && !*corpusOnly {
			t.Fatalf("decisions changed but heuristics.Version is still %s: bump it (or, if only the corpora changed, add -corpus-only)", Version)
		}
		if err := os.WriteFile(name, got.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if bytes.Equal(got.Bytes(), want) {
		return
	}
	gs, ws := bufio.NewScanner(&got), bufio.NewScanner(bytes.NewReader(want))
	n := 0
	for gs.Scan() {
		if !ws.Scan() {
			t.Fatalf("%s has fewer statements than the corpora", name)
		}
		if gs.Text() != ws.Text() {
			if n++; n <= 10 {
				_, content, _ := strings.Cut(gs.Text(), " ")
				t.Errorf("decisions with older statement %s changed", content)
			}
		}
	}
	t.Fatalf("%d older statements decide differently (or %s is stale: see the test's comment)", n, name)
}

func digestDecision(h hash.Hash, d Decision, shared int) {
	var b [8]byte
	num := func(x uint64) {
		binary.LittleEndian.PutUint64(b[:], x)
		h.Write(b[:])
	}
	str := func(s string) {
		num(uint64(len(s)))
		h.Write([]byte(s))
	}
	num(math.Float64bits(d.Confidence))
	str(d.Method)
	str(d.Reason)
	str(d.Blocked)
	num(uint64(len(d.Signals)))
	for _, s := range d.Signals {
		str(s.Name)
		num(math.Float64bits(s.Confidence))
		str(s.Detail)
	}
	num(uint64(shared))
}
