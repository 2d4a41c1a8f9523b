package llm

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
)

var (
	thinkBlock = regexp.MustCompile(`(?is)<think>.*?</think>`)
	thinkClose = regexp.MustCompile(`(?i)</think>`)
)

// extractObject finds the JSON object in a model's reply: it drops <think>
// blocks (and an unterminated one's opening tag), then tries each '{' in
// turn and returns the first balanced object that parses. Code fences and
// prose around the object need no special case: they are not inside it.
func extractObject(reply string) (map[string]any, error) {
	s := thinkBlock.ReplaceAllString(reply, "")
	if loc := thinkClose.FindStringIndex(s); loc != nil {
		s = s[loc[1]:] // reasoning whose opening tag was trimmed
	}
	// At most a few candidates: each costs a scan, and a hostile reply of
	// nothing but braces must stay linear.
	tries := 0
	for start := strings.IndexByte(s, '{'); start >= 0 && tries < 16; tries++ {
		if end := matchBrace(s, start); end > start {
			var obj map[string]any
			if err := json.Unmarshal([]byte(s[start:end+1]), &obj); err == nil {
				return obj, nil
			}
		}
		next := strings.IndexByte(s[start+1:], '{')
		if next < 0 {
			break
		}
		start += 1 + next
	}
	return nil, errors.New("no JSON object in reply")
}

// matchBrace returns the index of the '}' closing the '{' at start, honouring
// strings and escapes, or -1.
func matchBrace(s string, start int) int {
	depth, inString, escaped := 0, false, false
	for i := start; i < len(s); i++ {
		ch := s[i]
		switch {
		case escaped:
			escaped = false
		case inString && ch == '\\':
			escaped = true
		case ch == '"':
			inString = !inString
		case inString:
		case ch == '{':
			depth++
		case ch == '}':
			depth--
			if depth == 0 {
				return i
			}
		}
	}
	return -1
}

// Verdict is a semantic contradiction judgement.
type Verdict struct {
	Contradicts bool
	Confidence  float64
	Reasoning   string
}

// ParseVerdict reads {"contradicts": bool, "confidence": 0..1, "reasoning": "..."}
// leniently: booleans may be strings ("yes", "true"), confidence a string or
// a percentage. A missing confidence on a contradiction becomes 0.5, so an
// unsure model lands in the review band instead of being applied.
func ParseVerdict(reply string) (Verdict, error) {
	obj, err := extractObject(reply)
	if err != nil {
		return Verdict{}, &Error{Kind: KindGarbage, Err: fmt.Errorf("%v: %s", err, snippet([]byte(reply)))}
	}
	raw, ok := lookup(obj, "contradicts", "contradiction", "contradictory")
	if !ok {
		return Verdict{}, &Error{Kind: KindGarbage, Err: fmt.Errorf("reply lacks \"contradicts\": %s", snippet([]byte(reply)))}
	}
	b, ok := asBool(raw)
	if !ok {
		return Verdict{}, &Error{Kind: KindGarbage, Err: fmt.Errorf("\"contradicts\" is %v, not a boolean", raw)}
	}
	v := Verdict{Contradicts: b}
	if c, ok := lookup(obj, "confidence", "score"); ok {
		f, ok := asFloat(c)
		if !ok {
			return Verdict{}, &Error{Kind: KindGarbage, Err: fmt.Errorf("\"confidence\" is %v, not a number", c)}
		}
		if f > 1 && f <= 100 {
			f /= 100
		}
		v.Confidence = math.Max(0, math.Min(1, f))
	} else if b {
		v.Confidence = 0.5
	}
	if r, ok := lookup(obj, "reasoning", "reason", "explanation"); ok {
		v.Reasoning = truncate(clean(fmt.Sprint(r)), 1000)
	}
	return v, nil
}

// Limits on extracted facts: a runaway model must not flood memories.
const (
	maxFacts   = 50
	maxFactLen = 1000
)

// ParseFacts reads {"facts": ["...", ...]} leniently: non-string entries and
// blanks are dropped, duplicates removed, counts and lengths capped.
func ParseFacts(reply string) ([]string, error) {
	obj, err := extractObject(reply)
	if err != nil {
		return nil, &Error{Kind: KindGarbage, Err: fmt.Errorf("%v: %s", err, snippet([]byte(reply)))}
	}
	raw, ok := lookup(obj, "facts")
	if !ok {
		return nil, &Error{Kind: KindGarbage, Err: fmt.Errorf("reply lacks \"facts\": %s", snippet([]byte(reply)))}
	}
	list, ok := raw.([]any)
	if !ok {
		return nil, &Error{Kind: KindGarbage, Err: fmt.Errorf("\"facts\" is not a list")}
	}
	seen := map[string]bool{}
	var facts []string
	for _, f := range list {
		s, ok := f.(string)
		if !ok {
			continue
		}
		s = truncate(strings.Join(strings.Fields(clean(s)), " "), maxFactLen)
		if s == "" || seen[s] {
			continue
		}
		seen[s] = true
		facts = append(facts, s)
		if len(facts) == maxFacts {
			break
		}
	}
	return facts, nil
}

// clean makes model text storable in a PostgreSQL text column: valid UTF-8
// and no NUL bytes (which text rejects, failing the whole statement).
func clean(s string) string {
	return strings.ReplaceAll(strings.ToValidUTF8(s, ""), "\x00", "")
}

func lookup(obj map[string]any, names ...string) (any, bool) {
	for _, n := range names {
		for k, v := range obj {
			if strings.EqualFold(k, n) {
				return v, true
			}
		}
	}
	return nil, false
}

func asBool(v any) (bool, bool) {
	switch x := v.(type) {
	case bool:
		return x, true
	case string:
		switch strings.ToLower(strings.TrimSpace(x)) {
		case "true", "yes", "y":
			return true, true
		case "false", "no", "n":
			return false, true
		}
	case float64:
		if x == 0 || x == 1 {
			return x == 1, true
		}
	}
	return false, false
}

func asFloat(v any) (float64, bool) {
	switch x := v.(type) {
	case float64:
		return x, !math.IsNaN(x) && !math.IsInf(x, 0)
	case string:
		f, err := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(x), "%"), 64)
		return f, err == nil && !math.IsNaN(f) && !math.IsInf(f, 0)
	}
	return 0, false
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && (s[cut]&0xC0) == 0x80 { // do not split a UTF-8 sequence
		cut--
	}
	return s[:cut] + "…"
}
