package compaction

import (
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestSummaryIsDeterministicBoundedAndSaysWhatWasLost(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("word ", 400)
	cases := []struct {
		name     string
		d        digest
		contains []string
		absent   []string
	}{
		{
			name: "a short range lists every first line",
			d: digest{MinSeq: 7, MaxSeq: 10, Total: 4, Inbound: 2, Outbound: 2,
				User:      []string{"I adopted a cat named Miso\nshe is two", "I start at Acme on March 3"},
				Assistant: []string{"Congratulations on Miso!", "Good luck at Acme."}},
			contains: []string{"messages 7–10", "4 messages, 2 from the user, 2 from the assistant",
				`User said: "I adopted a cat named Miso"; "I start at Acme on March 3".`,
				`Assistant discussed: "Congratulations on Miso!"; "Good luck at Acme."`},
			absent: []string{"she is two", "more"},
		},
		{
			name: "a long range lists what fits and counts the rest",
			d: digest{MinSeq: 1, MaxSeq: 1000000, Total: 1000000, Inbound: 500000, Outbound: 500000,
				User: repeat("user line %d about something that matters", 60), Assistant: repeat("reply %d", 60)},
			contains: []string{"1000000 messages", `"user line 0 about something that matters"`, "more).", "Assistant discussed:"},
		},
		{
			name:     "a first line longer than the room is cut, not dropped",
			d:        digest{MinSeq: 1, MaxSeq: 2, Total: 2, Inbound: 1, Outbound: 1, User: []string{long}, Assistant: []string{long}},
			contains: []string{`User said: "word word`, "…", "Assistant discussed:"},
		},
		{
			name:     "blank, NULL-ish and control-character bodies are skipped or cleaned",
			d:        digest{MinSeq: 1, MaxSeq: 4, Total: 4, Inbound: 3, Outbound: 1, User: []string{"", "  \n\t\n", "\x00\x01hello\x7f there"}, Assistant: []string{"\n\nsecond line first"}},
			contains: []string{`"hello there" (+2 more).`, `"second line first".`},
			absent:   []string{"\x00", "\x01", "\x7f"},
		},
		{
			name:     "invalid UTF-8 becomes replacement characters",
			d:        digest{MinSeq: 1, MaxSeq: 1, Total: 1, Inbound: 1, User: []string{"caf\xe9 au lait \xff\xfe"}},
			contains: []string{"caf\uFFFD au lait"},
		},
		{
			name:     "only the assistant spoke",
			d:        digest{MinSeq: 3, MaxSeq: 3, Total: 1, Outbound: 1, Assistant: []string{"Reminder: dentist at 3pm"}},
			contains: []string{"1 message, 0 from the user, 1 from the assistant", `Assistant discussed: "Reminder: dentist at 3pm".`},
			absent:   []string{"User said"},
		},
		{
			name:     "nothing legible still gives the count",
			d:        digest{MinSeq: 3, MaxSeq: 4, Total: 2, Inbound: 2, User: []string{"   ", "\n"}},
			contains: []string{"User said: 2 messages."},
		},
		{
			name:     "no messages left says so",
			d:        digest{MinSeq: 40, MaxSeq: 60},
			contains: []string{"messages 40–60", "none of its messages remain"},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got := summarize(tc.d)
			if n := utf8.RuneCountInString(got); n > summaryMax || !utf8.ValidString(got) {
				t.Fatalf("%d runes (valid UTF-8: %v): %q", n, utf8.ValidString(got), got)
			}
			if again := summarize(tc.d); again != got {
				t.Fatalf("not deterministic:\n%q\n%q", got, again)
			}
			for _, c := range tc.contains {
				if !strings.Contains(got, c) {
					t.Errorf("summary lacks %q:\n%s", c, got)
				}
			}
			for _, a := range tc.absent {
				if strings.Contains(got, a) {
					t.Errorf("summary contains %q:\n%s", a, got)
				}
			}
		})
	}
}

func repeat(format string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf(format, i)
	}
	return out
}

func FuzzSummarize(f *testing.F) {
	f.Add("I adopted a cat\nshe is two", "Congrats!", int64(3), int64(2))
	f.Add("\xff\xfe\x00", "", int64(1), int64(0))
	f.Add(strings.Repeat("é", 700), strings.Repeat("\U0001F600", 300), int64(900), int64(900))
	f.Fuzz(func(t *testing.T, user, assistant string, in, out int64) {
		in, out = max(in, 0)%1e9, max(out, 0)%1e9
		d := digest{MinSeq: 1, MaxSeq: in + out + 1, Total: in + out, Inbound: in, Outbound: out,
			User: []string{user, user + user}, Assistant: []string{assistant}}
		got := summarize(d)
		if utf8.RuneCountInString(got) > summaryMax || !utf8.ValidString(got) || strings.ContainsRune(got, 0) {
			t.Fatalf("bad summary %q", got)
		}
	})
}
