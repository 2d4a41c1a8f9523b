package compaction

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// summaryMax caps the deterministic summary, in characters (runes), as
// clawbolt's summarize_dropped_messages does: it ends up in the agent's
// context, so it must stay small however large the range.
const summaryMax = 500

// Per-item caps: a user's first line says more about what was lost than the
// assistant's reply to it, so it gets more room.
const (
	userItemMax      = 120
	assistantItemMax = 80
)

// digest is what the deterministic summary of a range is built from: counts
// over the whole range and the leading lines of its first messages, each side
// in seq order (see digestSQL).
type digest struct {
	MinSeq, MaxSeq           int64 // the event's range
	Total, Inbound, Outbound int64
	User                     []string // bodies of the first inbound messages (possibly cut), seq order
	Assistant                []string // the same for outbound
}

// summarize is the range's summary, built without an LLM: counts, the first
// line of each user message, what the assistant discussed; at most
// summaryMax characters of valid UTF-8, and the same text for the same rows.
func summarize(d digest) string {
	if d.Total == 0 {
		return goneSummary(d.MinSeq, d.MaxSeq)
	}
	header := fmt.Sprintf("Conversation archived without compaction (messages %d–%d): %d %s, %d from the user, %d from the assistant.",
		d.MinSeq, d.MaxSeq, d.Total, plural(d.Total, "message", "messages"), d.Inbound, d.Outbound)
	room := summaryMax - utf8.RuneCountInString(header)
	// Keep some room for the assistant's side, unless there is none.
	reserve := 0
	if d.Outbound > 0 {
		reserve = min(room/3, 160)
	}
	var hidden, h int
	d.User, hidden = readable(d.User)
	d.Assistant, h = readable(d.Assistant)
	if hidden += h; hidden > 0 {
		note := fmt.Sprintf(" %d encrypted at rest, not quoted.", hidden)
		header += note
		room -= utf8.RuneCountInString(note)
	}
	user := section(" User said: ", lines(d.User, userItemMax), d.Inbound, room-reserve)
	room -= utf8.RuneCountInString(user)
	assistant := section(" Assistant discussed: ", lines(d.Assistant, assistantItemMax), d.Outbound, room)
	return truncateRunes(header+user+assistant, summaryMax)
}

// ciphertext recognises a message body encrypted at rest: clawbolt's
// envelope (clw1.<key id>.<wrapped key>.<token>) or a bare Fernet token.
// Such a body is never sent to an LLM nor quoted in a summary: it is
// meaningless there, and a secret's shape is not for a prompt either.
func ciphertext(body string) bool {
	b := strings.TrimSpace(body)
	return strings.HasPrefix(b, "clw1.") || (strings.HasPrefix(b, "gAAAAA") && !strings.ContainsAny(b, " \n"))
}

// readable drops the bodies that are ciphertext; it reports how many it
// dropped.
func readable(bodies []string) ([]string, int) {
	out := bodies[:0:0]
	for _, b := range bodies {
		if !ciphertext(b) {
			out = append(out, b)
		}
	}
	return out, len(bodies) - len(out)
}

// goneSummary is stored when none of the range's messages remain: the agent
// should at least know that it has a gap, and where.
func goneSummary(minSeq, maxSeq int64) string {
	return fmt.Sprintf("Conversation archived without compaction (messages %d–%d): none of its messages remain in the message store, so nothing of this range could be recovered.", minSeq, maxSeq)
}

// encryptedSummary is stored for a range whose messages are all encrypted
// at rest: the agent learns it has a gap, and nothing of the ciphertext.
func encryptedSummary(minSeq, maxSeq int64, n int) string {
	return fmt.Sprintf("Conversation archived without compaction (messages %d–%d): its %d %s encrypted at rest and could not be read, so nothing of this range was recovered.",
		minSeq, maxSeq, n, plural(int64(n), "message is", "messages are"))
}

// section renders `prefix "a"; "b" (+N more).` within budget runes, or ""
// when not even one item fits. count is the number of messages on this side
// of the whole range; the items are the legible first lines of its first
// messages.
func section(prefix string, items []string, count int64, budget int) string {
	if count == 0 || budget <= 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString(prefix)
	listed := 0
	for _, it := range items {
		sep := ""
		if listed > 0 {
			sep = "; "
		}
		quoted := sep + `"` + it + `"`
		tail := moreSuffix(count - int64(listed+1))
		if utf8.RuneCountInString(b.String())+utf8.RuneCountInString(quoted)+utf8.RuneCountInString(tail) > budget {
			if listed == 0 {
				// Cut the first item to fit rather than list nothing.
				avail := budget - utf8.RuneCountInString(prefix) - 2 - utf8.RuneCountInString(tail)
				if avail >= 8 {
					b.WriteString(`"` + truncateRunes(it, avail) + `"`)
					listed++
				}
			}
			break
		}
		b.WriteString(quoted)
		listed++
	}
	if listed == 0 {
		s := prefix + fmt.Sprintf("%d %s.", count, plural(count, "message", "messages"))
		if utf8.RuneCountInString(s) > budget {
			return ""
		}
		return s
	}
	b.WriteString(moreSuffix(count - int64(listed)))
	return b.String()
}

func moreSuffix(more int64) string {
	if more <= 0 {
		return "."
	}
	return fmt.Sprintf(" (+%d more).", more)
}

// lines returns the first legible line of each body, cut to max runes;
// bodies with nothing legible are left out.
func lines(bodies []string, max int) []string {
	out := make([]string, 0, len(bodies))
	for _, b := range bodies {
		if l := firstLine(b); l != "" {
			out = append(out, truncateRunes(l, max))
		}
	}
	return out
}

// firstLine is the first line of s holding anything but whitespace, as valid
// UTF-8 without control characters and with runs of spaces collapsed.
func firstLine(s string) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	for line := range strings.Lines(s) {
		if l := clean(line); l != "" {
			return l
		}
	}
	return ""
}

// clean makes text safe to store in a text column and show to a person:
// valid UTF-8, no NUL or other control characters (PostgreSQL rejects NUL in
// text), whitespace collapsed.
func clean(s string) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	s = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return ' '
		}
		return r
	}, s)
	return strings.Join(strings.Fields(s), " ")
}

// truncateRunes cuts s to at most n runes, the last being an ellipsis when
// anything was cut.
func truncateRunes(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	if n <= 0 {
		return ""
	}
	i, count := 0, 0
	for i < len(s) && count < n-1 {
		_, size := utf8.DecodeRuneInString(s[i:])
		i += size
		count++
	}
	return s[:i] + "…"
}

func plural(n int64, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
