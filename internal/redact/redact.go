// Package redact keeps credentials out of everything the daemon prints or
// stores: log lines, errors, reports, /readyz, last_error columns and history
// rows. It is the one place that knows what a secret looks like; every path
// that shows a database URL, an LLM endpoint or an error that may quote one
// goes through it.
//
// It never parses with net/url first: the URLs that most need redacting are
// the ones that do not parse (a password with an unencoded #, / or ?), and a
// parser's error quotes the very prefix that holds the password.
package redact

import (
	"regexp"
	"slices"
	"sort"
	"strings"
)

// Mask replaces every secret.
const Mask = "xxxxx"

// URL returns a URL with the password of its userinfo and any secret query
// parameter masked. The userinfo is everything between "://" and the last
// "@", so a password holding an unencoded "@", "#", "/" or "?" is masked
// whole; erring that way masks too much, never too little.
func URL(s string) string {
	i := strings.Index(s, "://")
	if i < 0 {
		return s
	}
	rest := s[i+3:]
	if at := strings.LastIndex(rest, "@"); at >= 0 {
		user, _, hasPassword := strings.Cut(rest[:at], ":")
		if hasPassword {
			rest = user + ":" + Mask + rest[at:]
		}
	}
	return queryParam.ReplaceAllString(s[:i+3]+rest, "${1}"+Mask)
}

// DSN masks the password of a PostgreSQL connection string, in URL form or
// key=value form.
func DSN(s string) string {
	if strings.Contains(s, "://") {
		return URL(s)
	}
	return kvPassword.ReplaceAllString(s, "${1}"+Mask)
}

// Text masks credentials wherever they appear in free text (an error, a
// server's answer): URL userinfo passwords, bearer tokens, API keys shaped
// like sk-..., secret query parameters and password=... pairs.
func Text(s string) string {
	for _, r := range textPatterns {
		s = r.ReplaceAllString(s, "${1}"+Mask+"${2}")
	}
	return s
}

// Secret masks every occurrence of the given secrets in s, and, for each
// secret of four or more characters, every run of four or more of its leading
// characters: a parser that stops at a character it does not accept quotes
// only a prefix ("parse \"postgres://agent:Hunter\"" for Hunter#2).
func Secret(s string, secrets ...string) string {
	for _, sec := range secrets {
		if sec == "" {
			continue
		}
		s = strings.ReplaceAll(s, sec, Mask)
		for n := len(sec) - 1; n >= 4; n-- {
			s = strings.ReplaceAll(s, sec[:n], Mask)
		}
	}
	return s
}

// DSNSecrets returns the secrets a connection string carries (the password,
// however it is written), for Secret.
func DSNSecrets(dsn string) []string {
	var out []string
	if i := strings.Index(dsn, "://"); i >= 0 {
		rest := dsn[i+3:]
		if at := strings.LastIndex(rest, "@"); at >= 0 {
			if _, pw, ok := strings.Cut(rest[:at], ":"); ok && pw != "" {
				out = append(out, pw)
			}
		}
		for _, m := range queryParam.FindAllStringSubmatch(dsn, -1) {
			out = append(out, strings.TrimPrefix(m[0], m[1]))
		}
		return out
	}
	for _, m := range kvPassword.FindAllStringSubmatch(dsn, -1) {
		if v := strings.Trim(strings.TrimPrefix(m[0], m[1]), "'"); v != "" {
			out = append(out, v)
		}
	}
	return out
}

var (
	kvPassword = regexp.MustCompile(`(?i)(password\s*=\s*)(?:'(?:[^'\\]|\\.)*'|\S+)`)
	queryParam = regexp.MustCompile(`(?i)([?&](?:password|api[_-]?key|key|token|access_token|secret)=)[^&#\s"']*`)

	textPatterns = []*regexp.Regexp{
		regexp.MustCompile(`(?i)(bearer\s+)[^\s"',;]+`),
		regexp.MustCompile(`(?i)(basic\s+)[A-Za-z0-9+/=]{8,}`),
		regexp.MustCompile(`\b((?:sk|pk|rk)-)[A-Za-z0-9_\-]{6,}`),
		regexp.MustCompile(`(?i)(\b[a-z][a-z0-9+.\-]*://[^:/\s@"']*:)[^\s"']*(@)`),
		queryParam,
		kvPassword,
	}
)

// Redactor masks the daemon's own secrets by their values (the LLM's API
// key, the admin token, the database password) as well as every credential
// the patterns recognise by its shape. A model can repeat anything it was
// sent or trained on, and a server can echo the request it got: what either
// returns is masked before it is stored, logged or shown. The zero value and
// a nil *Redactor mask by pattern only.
type Redactor struct {
	secrets []string // longest first, so a secret that contains another is masked whole
}

// MinSecret is the shortest value a Redactor masks by value: a shorter one
// would mask ordinary words in every text it passes through, and is no
// secret worth the name.
const MinSecret = 6

// echoPrefix is how much of a secret's beginning, echoed on its own (a model
// that stops mid-key, a server that quotes a prefix), is masked as the
// secret: enough that ordinary text never matches by chance.
const echoPrefix = 12

// New returns a redactor that knows the given secret values; empty and
// shorter ones are ignored.
func New(secrets ...string) *Redactor {
	r := &Redactor{}
	for _, s := range secrets {
		if len(s) >= MinSecret && !slices.Contains(r.secrets, s) {
			r.secrets = append(r.secrets, s)
		}
	}
	sort.Slice(r.secrets, func(i, j int) bool { return len(r.secrets[i]) > len(r.secrets[j]) })
	return r
}

// Text masks an error or a server's answer: every pattern of Text, and the
// known values.
func (r *Redactor) Text(s string) string { return r.values(Text(s)) }

// Prose masks what a model wrote, which may become a memory, a history row's
// reason or a cached verdict: the known values and the credentials whose
// shape cannot be mistaken for words (keys like sk-..., URL passwords,
// secret query parameters, password=..., bearer and basic credentials that
// look like tokens). Text's looser patterns would mask "the bearer of" or "a
// basic understanding" in the facts it keeps.
func (r *Redactor) Prose(s string) string {
	for _, p := range prosePatterns {
		s = p.ReplaceAllString(s, "${1}"+Mask+"${2}")
	}
	return r.values(s)
}

// values masks every occurrence of a known secret, and every run of at
// least echoPrefix of its leading characters.
func (r *Redactor) values(s string) string {
	if r == nil {
		return s
	}
	for _, sec := range r.secrets {
		if len(sec) <= echoPrefix {
			s = strings.ReplaceAll(s, sec, Mask)
			continue
		}
		s = maskPrefixRuns(s, sec)
	}
	return s
}

// maskPrefixRuns replaces each match of sec's first echoPrefix characters,
// extended as far as the text goes on matching sec, by Mask.
func maskPrefixRuns(s, sec string) string {
	head := sec[:echoPrefix]
	var b strings.Builder
	for {
		i := strings.Index(s, head)
		if i < 0 {
			if b.Len() == 0 {
				return s
			}
			b.WriteString(s)
			return b.String()
		}
		n := echoPrefix
		for i+n < len(s) && n < len(sec) && s[i+n] == sec[n] {
			n++
		}
		b.WriteString(s[:i])
		b.WriteString(Mask)
		s = s[i+n:]
	}
}

var prosePatterns = []*regexp.Regexp{
	// A credential after bearer/basic only when it looks like one: not
	// letters alone.
	regexp.MustCompile(`(?i)(bearer\s+)[A-Za-z0-9._~+/\-]*[0-9._~+/\-][A-Za-z0-9._~+/\-]*=*`),
	regexp.MustCompile(`(?i)(basic\s+)[A-Za-z0-9+/]*[0-9+/][A-Za-z0-9+/]*=*`),
	regexp.MustCompile(`\b((?:sk|pk|rk)-)[A-Za-z0-9_\-]{6,}`),
	regexp.MustCompile(`(?i)(\b[a-z][a-z0-9+.\-]*://[^:/\s@"']*:)[^\s"']*(@)`),
	queryParam,
	kvPassword,
}
