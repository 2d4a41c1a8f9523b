package console

import (
	"strings"
	"unicode"
)

// Span is a run of words in a diff: kept on both sides, or only on one.
type Span struct {
	Text string
	Op   byte // '=' kept, '-' only in the old text, '+' only in the new
}

// WordDiff splits old and new into words (with the spaces and punctuation
// around them) and returns each side's spans, the words the other side
// lacks marked: what a reviewer's eye needs in "Lives in Toronto" →
// "Lives in Vancouver". A longest common subsequence over words; contents
// are short (an attribute is a sentence), so the quadratic table is fine,
// and past maxWords the whole text is one change.
func WordDiff(old, new string) (oldSpans, newSpans []Span) {
	a, b := words(old), words(new)
	const maxWords = 400
	if len(a) > maxWords || len(b) > maxWords {
		return []Span{{old, '-'}}, []Span{{new, '+'}}
	}
	// lcs[i][j] = length of the LCS of a[i:] and b[j:], compared on the
	// words without case or trailing punctuation.
	lcs := make([][]int, len(a)+1)
	for i := range lcs {
		lcs[i] = make([]int, len(b)+1)
	}
	for i := len(a) - 1; i >= 0; i-- {
		for j := len(b) - 1; j >= 0; j-- {
			if key(a[i]) == key(b[j]) {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	i, j := 0, 0
	for i < len(a) || j < len(b) {
		switch {
		case i < len(a) && j < len(b) && key(a[i]) == key(b[j]):
			oldSpans = appendSpan(oldSpans, a[i], '=')
			newSpans = appendSpan(newSpans, b[j], '=')
			i, j = i+1, j+1
		case j < len(b) && (i == len(a) || lcs[i][j+1] >= lcs[i+1][j]):
			newSpans = appendSpan(newSpans, b[j], '+')
			j++
		default:
			oldSpans = appendSpan(oldSpans, a[i], '-')
			i++
		}
	}
	return oldSpans, newSpans
}

// appendSpan merges consecutive words of one kind into one span.
func appendSpan(s []Span, w string, op byte) []Span {
	if n := len(s); n > 0 && s[n-1].Op == op {
		s[n-1].Text += w
		return s
	}
	return append(s, Span{w, op})
}

// words splits s into words, each with the spaces that follow it, so that
// joining them gives s back.
func words(s string) []string {
	var out []string
	start := 0
	inSpace := false
	for i, r := range s {
		sp := unicode.IsSpace(r)
		if !sp && inSpace {
			out = append(out, s[start:i])
			start = i
		}
		inSpace = sp
	}
	if start < len(s) {
		out = append(out, s[start:])
	}
	return out
}

func key(w string) string {
	return strings.ToLower(strings.TrimRightFunc(w, func(r rune) bool { return unicode.IsSpace(r) || unicode.IsPunct(r) }))
}
