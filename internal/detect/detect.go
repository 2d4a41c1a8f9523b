package detect

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/supersessiond/supersessiond/heuristics"
)

// MaxLineBytes bounds one input line. Attributes are sentences; a line past
// this is an error, not a reason to hold gigabytes in memory.
const MaxLineBytes = 16 << 20

// Pair is one parsed input line.
type Pair struct {
	ID     json.RawMessage // as given: usually a string; null when absent
	Older  heuristics.Input
	Newer  heuristics.Input
	Aspect string
	Label  *bool  // eval only
	Class  string // eval only: "cls"
}

// wire is the input line's JSON shape.
type wire struct {
	ID        json.RawMessage `json:"id"`
	Older     *string         `json:"older"`
	Newer     *string         `json:"newer"`
	OlderAt   string          `json:"older_at"`
	NewerAt   string          `json:"newer_at"`
	OlderKind string          `json:"older_kind"`
	NewerKind string          `json:"newer_kind"`
	Aspect    string          `json:"aspect"`
	Label     *bool           `json:"label"`
	Cls       string          `json:"cls"`
}

// LineError is a line that could not be parsed. ID is the line's id when
// the JSON was readable enough to have one.
type LineError struct {
	ID  json.RawMessage
	Err string
}

func (e *LineError) Error() string { return e.Err }

// ParseLine parses one non-blank input line.
func ParseLine(line []byte) (Pair, error) {
	var w wire
	dec := json.NewDecoder(bytes.NewReader(line))
	if err := dec.Decode(&w); err != nil {
		return Pair{}, &LineError{ID: idOnly(line), Err: "invalid JSON: " + jsonError(err)}
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return Pair{}, &LineError{ID: w.ID, Err: "invalid JSON: more than one value on the line"}
	}
	id := w.ID
	if len(id) == 0 {
		id = nil
	}
	p := Pair{ID: id, Aspect: w.Aspect, Label: w.Label, Class: w.Cls}
	switch {
	case w.Older == nil && w.Newer == nil:
		return p, &LineError{ID: id, Err: `missing "older" and "newer"`}
	case w.Older == nil:
		return p, &LineError{ID: id, Err: `missing "older"`}
	case w.Newer == nil:
		return p, &LineError{ID: id, Err: `missing "newer"`}
	}
	var err error
	p.Older = heuristics.Input{Content: *w.Older, Aspect: w.Aspect}
	p.Newer = heuristics.Input{Content: *w.Newer, Aspect: w.Aspect}
	if p.Older.CreatedAt, err = parseTime("older_at", w.OlderAt); err != nil {
		return p, &LineError{ID: id, Err: err.Error()}
	}
	if p.Newer.CreatedAt, err = parseTime("newer_at", w.NewerAt); err != nil {
		return p, &LineError{ID: id, Err: err.Error()}
	}
	if p.Older.Kind, err = parseKind("older_kind", w.OlderKind); err != nil {
		return p, &LineError{ID: id, Err: err.Error()}
	}
	if p.Newer.Kind, err = parseKind("newer_kind", w.NewerKind); err != nil {
		return p, &LineError{ID: id, Err: err.Error()}
	}
	return p, nil
}

// idOnly recovers the id of a line whose other fields do not decode (a
// number where a string belongs), so that the error still names the pair.
func idOnly(line []byte) json.RawMessage {
	var v struct {
		ID json.RawMessage `json:"id"`
	}
	if json.Unmarshal(line, &v) != nil || len(v.ID) == 0 {
		return nil
	}
	return v.ID
}

func jsonError(err error) string {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		if te.Field != "" {
			return fmt.Sprintf("field %q: %s is not a %s", te.Field, te.Value, te.Type)
		}
		return fmt.Sprintf("a JSON %s is not a pair object", te.Value)
	}
	if errors.Is(err, io.EOF) {
		return "empty"
	}
	return err.Error()
}

func parseTime(field, s string) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}, fmt.Errorf("%s: %q is not an RFC 3339 time", field, s)
	}
	return t, nil
}

func parseKind(field, s string) (string, error) {
	switch s {
	case "", "attribute":
		return "attribute", nil
	case "constraint":
		return "constraint", nil
	}
	return "", fmt.Errorf(`%s: %q is not "attribute" or "constraint"`, field, s)
}

// Result is one output line.
type Result struct {
	ID         json.RawMessage     `json:"id"`
	Supersede  bool                `json:"supersede"`
	Confidence float64             `json:"confidence"`
	Method     string              `json:"method"`
	Signals    []heuristics.Signal `json:"signals"`
	Reason     string              `json:"reason"`
}

// errorLine is the output for a line that could not be parsed.
type errorLine struct {
	ID    json.RawMessage `json:"id"`
	Error string          `json:"error"`
}

// Decide decides one pair: supersede when not blocked and the confidence
// reaches min.
func Decide(p Pair, min float64) Result {
	d := heuristics.Decide(p.Older, p.Newer)
	sigs := d.Signals
	if sigs == nil {
		sigs = []heuristics.Signal{}
	}
	return Result{
		ID:         p.ID,
		Supersede:  d.Blocked == "" && d.Confidence > 0 && d.Confidence >= min,
		Confidence: d.Confidence,
		Method:     d.Method,
		Signals:    sigs,
		Reason:     d.Reason,
	}
}

// Lines calls fn for every non-blank line of r, with its 1-based line
// number. A line longer than MaxLineBytes is passed truncated with tooLong
// set. Errors are read errors only.
func Lines(r io.Reader, fn func(n int, line []byte, tooLong bool) error) error {
	br := bufio.NewReaderSize(r, 64<<10)
	var buf []byte
	n := 0
	for {
		buf = buf[:0]
		tooLong := false
		var err error
		for {
			var chunk []byte
			chunk, err = br.ReadSlice('\n')
			if len(buf)+len(chunk) <= MaxLineBytes {
				buf = append(buf, chunk...)
			} else {
				tooLong = true
			}
			if !errors.Is(err, bufio.ErrBufferFull) {
				break
			}
		}
		if err != nil && !errors.Is(err, io.EOF) {
			return err
		}
		if len(buf) > 0 || tooLong {
			n++
			line := bytes.TrimSpace(buf)
			if len(line) > 0 || tooLong {
				if ferr := fn(n, line, tooLong); ferr != nil {
					return ferr
				}
			}
		}
		if errors.Is(err, io.EOF) {
			return nil
		}
	}
}

// Stats counts what Run did.
type Stats struct {
	Pairs  int // lines decided
	Errors int // lines that yielded an error object
}

// Run is `detect`: it reads pairs from r and writes one decision (or error)
// object per non-blank line to w, in order.
func Run(r io.Reader, w io.Writer, min float64) (Stats, error) {
	var st Stats
	bw := bufio.NewWriter(w)
	enc := json.NewEncoder(bw)
	enc.SetEscapeHTML(false)
	err := Lines(r, func(n int, line []byte, tooLong bool) error {
		if tooLong {
			st.Errors++
			return enc.Encode(errorLine{Error: fmt.Sprintf("line %d: longer than %d bytes", n, MaxLineBytes)})
		}
		p, err := ParseLine(line)
		if err != nil {
			st.Errors++
			var le *LineError
			errors.As(err, &le)
			return enc.Encode(errorLine{ID: le.ID, Error: fmt.Sprintf("line %d: %s", n, le.Err)})
		}
		st.Pairs++
		return enc.Encode(Decide(p, min))
	})
	if ferr := bw.Flush(); err == nil {
		err = ferr
	}
	return st, err
}
