package compaction

import (
	"errors"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestErrorTextCarriesNoCredentials(t *testing.T) {
	t.Parallel()
	for _, msg := range []string{
		"llm http_status: upstream said: Authorization: Bearer sk-live-abcdef123456 rejected",
		"llm unavailable: Post \"https://bob:hunter2-secret@llm.internal/v1/chat/completions\": dial tcp: refused",
		"llm http_status: https://llm.internal/v1/chat/completions?api_key=hunter2-secret answered 401",
		"llm garbage: reply was {\"key\": \"sk-proj-abcdef123456\"}",
	} {
		got := errorText(errors.New(msg))
		for _, secret := range []string{"abcdef123456", "hunter2"} {
			if strings.Contains(got, secret) {
				t.Errorf("errorText(%q) = %q", msg, got)
			}
		}
		if !strings.Contains(got, "xxxxx") {
			t.Errorf("errorText(%q) = %q: nothing redacted", msg, got)
		}
	}
	long := errorText(errors.New(strings.Repeat("é", 5000) + "\x00"))
	if utf8.RuneCountInString(long) > maxErrorLen || strings.ContainsRune(long, 0) {
		t.Fatalf("error text not bounded or cleaned: %d runes", utf8.RuneCountInString(long))
	}
}
