package config

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"sort"
	"strings"

	"go.yaml.in/yaml/v3"
)

// EnvPrefix marks environment variables that override agent.yaml keys.
const EnvPrefix = "SUPERSESSIOND_"

// Environment variables with the prefix that are not key overrides.
const (
	EnvConfig          = "SUPERSESSIOND_CONFIG"
	EnvDatabaseURL     = "SUPERSESSIOND_DATABASE_URL"
	EnvTestDatabaseURL = "SUPERSESSIOND_TEST_DATABASE_URL"
)

// Source says where a configuration comes from.
type Source struct {
	// Path of agent.yaml. Empty means "no file": defaults plus environment.
	Path string
	// Explicit is true when the operator named the file (flag or
	// $SUPERSESSIOND_CONFIG): then a missing file is an error, not a reason
	// to fall back to defaults.
	Explicit bool
	// Environ supplies the environment; nil means os.Environ.
	Environ func() []string
}

// Resolve picks the configuration file: the flag, else $SUPERSESSIOND_CONFIG,
// else DefaultPath (not explicit: when absent, built-in defaults apply).
func Resolve(flagPath string, environ func() []string) Source {
	if environ == nil {
		environ = os.Environ
	}
	if flagPath != "" {
		return Source{Path: flagPath, Explicit: true, Environ: environ}
	}
	if p := Getenv(environ, EnvConfig); p != "" {
		return Source{Path: p, Explicit: true, Environ: environ}
	}
	return Source{Path: DefaultPath, Environ: environ}
}

// Getenv is name's value in environ ("" when unset): the one lookup the
// daemon and the commands use, so that tests can hand them an environment.
func Getenv(environ func() []string, name string) string {
	for _, kv := range environ() {
		if k, v, ok := strings.Cut(kv, "="); ok && k == name {
			return v
		}
	}
	return ""
}

// Loaded is the result of a successful Load.
type Loaded struct {
	Config *Config
	// File is the file that was read, or "" when built-in defaults apply.
	File string
	// Digest identifies the bytes File held when they were read ("" without
	// a file), so the daemon can tell whether the file on disk is the
	// configuration it runs.
	Digest string
	// Notes are things worth saying once in the log: defaults in use,
	// environment overrides applied, settings that cannot take effect.
	Notes []string
}

// Digest names file contents, for comparison with FileDigest.
func Digest(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// FileDigest is the Digest of the file at path as it is now, following
// symbolic links.
func FileDigest(path string) (string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	return Digest(b), nil
}

// Load builds a Config from scratch: defaults, then the file, then
// SUPERSESSIOND_ environment overrides, then validation. Every call is a fresh
// parse, so a key deleted from the file really goes back to its default.
// Failures are *Error values naming the key path, the value and the rule.
func Load(src Source) (*Loaded, error) {
	if src.Environ == nil {
		src.Environ = os.Environ
	}
	s := newSchema()
	cfg := Default()
	out := &Loaded{Config: cfg}
	var problems []Problem

	if src.Path != "" {
		// Read once, parse those bytes and remember their digest: what runs
		// is then known to be exactly what was on disk (see Digest).
		raw, err := os.ReadFile(src.Path)
		var tree map[string]any
		if err == nil {
			out.Digest = Digest(raw)
			err = yaml.Unmarshal(raw, &tree)
		}
		switch {
		case err == nil:
			out.File = src.Path
			problems = append(problems, s.apply(cfg, "", tree)...)
		case errors.Is(err, fs.ErrNotExist) && !src.Explicit:
			out.Notes = append(out.Notes, fmt.Sprintf("no configuration file at %s: using built-in defaults", src.Path))
		case errors.Is(err, fs.ErrNotExist):
			return nil, &Error{Path: src.Path, Problems: []Problem{{Rule: fmt.Sprintf("configuration file %s does not exist", src.Path)}}}
		default:
			return nil, &Error{Path: src.Path, Problems: []Problem{{Rule: fmt.Sprintf("cannot read or parse %s: %v", src.Path, yamlError(src.Path, err))}}}
		}
	}

	envProblems, envNotes := s.applyEnv(cfg, src.Environ)
	problems = append(problems, envProblems...)
	out.Notes = append(out.Notes, envNotes...)
	if u := Getenv(src.Environ, EnvDatabaseURL); u != "" {
		cfg.Maintenance.Database.URL = u
		out.Notes = append(out.Notes, "database URL taken from "+EnvDatabaseURL)
	}

	if len(problems) == 0 {
		problems = cfg.validate(s)
		out.Notes = append(out.Notes, cfg.warnings()...)
		if Getenv(src.Environ, EnvDatabaseURL) != "" {
			for i := range problems {
				if problems[i].Key == "maintenance.database.url" {
					problems[i].Rule += " (from " + EnvDatabaseURL + ")"
				}
			}
		}
	}
	if len(problems) > 0 {
		return nil, &Error{Path: src.Path, Problems: problems}
	}
	return out, nil
}

// apply walks a parsed YAML tree and sets every known key. Unknown keys under
// maintenance are errors (a typo must not silently fall back to a default);
// unknown keys elsewhere belong to the agent stack and are ignored.
func (s *schema) apply(cfg *Config, prefix string, tree map[string]any) []Problem {
	var problems []Problem
	names := make([]string, 0, len(tree))
	for n := range tree {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, name := range names {
		raw := tree[name]
		path := name
		if prefix != "" {
			path = prefix + "." + name
		}
		lower := strings.ToLower(path)
		if k, ok := s.leaves[lower]; ok {
			if raw == nil {
				continue // "key:" with no value keeps the default
			}
			if err := k.set(cfg, raw); err != nil {
				problems = append(problems, Problem{Key: k.path, Rule: err.Error()})
			}
			s.given[lower] = true
			continue
		}
		if canonical, ok := s.sections[lower]; ok {
			switch sub := raw.(type) {
			case map[string]any:
				problems = append(problems, s.apply(cfg, canonical, sub)...)
			case nil:
			default:
				problems = append(problems, Problem{Key: canonical, Rule: fmt.Sprintf("%s is not a mapping: expected keys %s",
					describe(raw), strings.Join(s.childrenOf(canonical), ", "))})
			}
			continue
		}
		if lower == "maintenance" || strings.HasPrefix(lower, "maintenance.") {
			problems = append(problems, s.unknown(path))
		}
	}
	return problems
}

func (s *schema) unknown(path string) Problem {
	section := s.nearestSection(strings.ToLower(path))
	if section == "" {
		return Problem{Key: path, Rule: "unknown key (the daemon reads memory.pipelineV2 and maintenance)"}
	}
	return Problem{Key: path, Rule: fmt.Sprintf("unknown key (known keys under %s: %s)",
		section, strings.Join(s.childrenOf(section), ", "))}
}

// applyEnv applies SUPERSESSIOND_ overrides: SUPERSESSIOND_A__B__C=v sets
// a.b.c, with the path matched to the known keys without regard to case.
func (s *schema) applyEnv(cfg *Config, environ func() []string) ([]Problem, []string) {
	var problems []Problem
	var notes []string
	vars := map[string]string{} // dotted lower path → variable name
	values := map[string]string{}
	for _, kv := range environ() {
		name, value, ok := strings.Cut(kv, "=")
		if !ok || !strings.HasPrefix(name, EnvPrefix) {
			continue
		}
		switch name {
		case EnvConfig, EnvDatabaseURL, EnvTestDatabaseURL:
			continue
		}
		rest := strings.TrimPrefix(name, EnvPrefix)
		if !strings.Contains(rest, "__") && !s.isKnownTop(rest) {
			continue // not an override (e.g. a variable of our scripts)
		}
		path := strings.ToLower(strings.ReplaceAll(rest, "__", "."))
		vars[path], values[path] = name, value
	}
	paths := make([]string, 0, len(values))
	for path := range values {
		paths = append(paths, path)
	}
	sort.Strings(paths)
	for _, path := range paths {
		name, value := vars[path], values[path]
		if k, ok := s.leaves[path]; ok {
			if err := k.set(cfg, value); err != nil {
				problems = append(problems, Problem{Key: k.path, Rule: err.Error() + " (from " + name + ")"})
				continue
			}
			s.given[path] = true
			notes = append(notes, fmt.Sprintf("%s overridden by %s", k.path, name))
			continue
		}
		if canonical, ok := s.sections[path]; ok {
			problems = append(problems, Problem{Key: canonical, Rule: fmt.Sprintf(
				"%s sets a whole section to %s: set one of its keys instead, e.g. %s (keys under %s: %s)",
				name, describe(value), envName(s.exampleLeaf(canonical)), canonical, strings.Join(s.childrenOf(canonical), ", "))})
			continue
		}
		if strings.HasPrefix(path, "maintenance") || strings.HasPrefix(path, "memory.pipelinev2") {
			pr := s.unknown(path)
			pr.Rule += " (from " + name + ")"
			problems = append(problems, pr)
			continue
		}
		notes = append(notes, fmt.Sprintf("%s does not name a key this daemon reads: ignored", name))
	}
	return problems, notes
}

func (s *schema) isKnownTop(rest string) bool {
	lower := strings.ToLower(rest)
	_, leaf := s.leaves[lower]
	_, sec := s.sections[lower]
	return leaf || sec
}

// envName is the environment variable that overrides a key.
func envName(path string) string {
	return EnvPrefix + strings.ToUpper(strings.ReplaceAll(path, ".", "__"))
}
