package config

import (
	"fmt"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
)

// key describes one leaf of Config: its canonical dotted path (as written in
// agent.yaml) and where it lives in the struct.
type key struct {
	path  string
	index []int
	typ   reflect.Type
	def   string // the default tag
	check string // the check tag
	// restart: a running daemon cannot apply the key (reload:"restart" on
	// the key or on a section above it); a reload keeps its value.
	restart bool
	// judgment: "always" when the key changes the judgment, "semantic"
	// when it does while the semantic fallback is in effect, "" when not.
	judgment string
}

// schema is the set of keys Config knows, derived once from its key tags so
// that the struct is the single source of truth for names.
type schema struct {
	leaves   map[string]key    // lower-cased path → key
	sections map[string]string // lower-cased section path → canonical path
	given    map[string]bool   // lower-cased paths the file or the environment set
	ordered  []key             // every leaf, in the order Config declares them
}

var (
	durationType = reflect.TypeOf(time.Duration(0))
	tokensType   = reflect.TypeOf(Tokens(nil))
	listType     = reflect.TypeOf(List(nil))
)

func newSchema() *schema {
	s := &schema{leaves: map[string]key{}, sections: map[string]string{}, given: map[string]bool{}}
	s.walk(reflect.TypeOf(Config{}), "", nil, false)
	return s
}

func (s *schema) walk(t reflect.Type, prefix string, index []int, restart bool) {
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		name := f.Tag.Get("key")
		if name == "" {
			continue
		}
		path := name
		if prefix != "" {
			path = prefix + "." + name
		}
		idx := append(append([]int(nil), index...), i)
		restart := restart || reloadTag(path, f.Tag.Get("reload"))
		if f.Type.Kind() == reflect.Struct && f.Type != durationType {
			s.sections[strings.ToLower(path)] = path
			s.walk(f.Type, path, idx, restart)
			continue
		}
		k := key{path: path, index: idx, typ: f.Type, def: f.Tag.Get("default"), check: f.Tag.Get("check"), restart: restart,
			judgment: judgmentTag(path, f.Tag.Get("judgment"))}
		s.leaves[strings.ToLower(path)] = k
		s.ordered = append(s.ordered, k)
	}
}

// judgmentTag reads a judgment tag: "always", "semantic" or none.
func judgmentTag(path, tag string) string {
	switch tag {
	case "", "always", "semantic":
		return tag
	}
	panic("config: judgment tag of " + path + " is " + strconv.Quote(tag) + ", not \"always\" or \"semantic\"")
}

// reloadTag reads a reload tag: "restart", or none (a reload applies the
// key). Anything else is a mistake in Config's declaration.
func reloadTag(path, tag string) bool {
	switch tag {
	case "":
		return false
	case "restart":
		return true
	}
	panic("config: reload tag of " + path + " is " + strconv.Quote(tag) + ", not \"restart\"")
}

// childrenOf lists the canonical names directly below a section, for
// "did you mean" style messages.
func (s *schema) childrenOf(section string) []string {
	prefix := strings.ToLower(section) + "."
	seen := map[string]bool{}
	collect := func(lower, canonical string) {
		if !strings.HasPrefix(lower, prefix) {
			return
		}
		rest := canonical[len(prefix):]
		if i := strings.IndexByte(rest, '.'); i >= 0 {
			rest = rest[:i]
		}
		seen[rest] = true
	}
	for l, k := range s.leaves {
		collect(l, k.path)
	}
	for l, c := range s.sections {
		collect(l, c)
	}
	out := make([]string, 0, len(seen))
	for n := range seen {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// exampleLeaf returns the first key below a section, in sorted order, for
// messages that need an example.
func (s *schema) exampleLeaf(section string) string {
	prefix := strings.ToLower(section) + "."
	best := ""
	for l, k := range s.leaves {
		if strings.HasPrefix(l, prefix) && (best == "" || k.path < best) {
			best = k.path
		}
	}
	return best
}

// nearestSection returns the deepest known section that is a prefix of path.
func (s *schema) nearestSection(lowerPath string) string {
	parts := strings.Split(lowerPath, ".")
	for n := len(parts) - 1; n > 0; n-- {
		if c, ok := s.sections[strings.Join(parts[:n], ".")]; ok {
			return c
		}
	}
	return ""
}

// set converts raw (from YAML or an environment variable) to the key's type
// and stores it in cfg.
func (k key) set(cfg *Config, raw any) error {
	v := reflect.ValueOf(cfg).Elem().FieldByIndex(k.index)
	switch {
	case k.typ == tokensType:
		t, err := toTokens(raw)
		if err != nil {
			return err
		}
		v.Set(reflect.ValueOf(t))
	case k.typ == listType:
		l, err := toList(raw)
		if err != nil {
			return err
		}
		v.Set(reflect.ValueOf(l))
	case k.typ == durationType:
		d, err := toDuration(raw)
		if err != nil {
			return err
		}
		v.SetInt(int64(d))
	case k.typ.Kind() == reflect.Bool:
		b, err := toBool(raw)
		if err != nil {
			return err
		}
		v.SetBool(b)
	case k.typ.Kind() == reflect.Int:
		n, err := toInt(raw)
		if err != nil {
			return err
		}
		v.SetInt(int64(n))
	case k.typ.Kind() == reflect.Float64:
		f, err := toFloat(raw)
		if err != nil {
			return err
		}
		v.SetFloat(f)
	case k.typ.Kind() == reflect.String:
		str, err := toString(raw)
		if err != nil {
			return err
		}
		v.SetString(str)
	default:
		return fmt.Errorf("internal: unsupported config type %s", k.typ)
	}
	return nil
}

// get returns the key's current value in cfg, for messages.
func (k key) get(cfg *Config) any {
	return reflect.ValueOf(cfg).Elem().FieldByIndex(k.index).Interface()
}

// setDefaults sets every key to its default tag. A default that does not
// convert is a bug in this package, caught by any test that loads.
func (s *schema) setDefaults(cfg *Config) {
	for _, k := range s.leaves {
		if err := k.set(cfg, k.def); err != nil {
			panic(fmt.Sprintf("config: default of %s: %v", k.path, err))
		}
	}
}

// checkTags applies each key's own rule (its check tag) to its value.
func (s *schema) checkTags(cfg *Config) []Problem {
	var ps []Problem
	for _, k := range s.leaves {
		if k.check == "" {
			continue
		}
		if rule := k.violated(k.get(cfg)); rule != "" {
			ps = append(ps, Problem{Key: k.path, Rule: rule})
		}
	}
	sort.Slice(ps, func(i, j int) bool { return ps[i].Key < ps[j].Key })
	return ps
}

// violated says which rule of the check tag v breaks ("" when none).
func (k key) violated(v any) string {
	name, arg, _ := strings.Cut(k.check, "=")
	switch name {
	case "positive":
		if d, ok := v.(time.Duration); ok && d <= 0 {
			return fmt.Sprintf("%s must be a positive duration", d)
		}
		if n, ok := v.(int); ok && n <= 0 {
			return fmt.Sprintf("%d must be a positive number", n)
		}
	case "nonnegative":
		if d, ok := v.(time.Duration); ok && d < 0 {
			return fmt.Sprintf("%s must not be negative", d)
		}
	case "range":
		lo, hi, _ := strings.Cut(arg, "..")
		f := fmt.Sprint(v)
		if x, ok := toNumber(v); ok && (x < mustFloat(lo) || x > mustFloat(hi)) {
			return fmt.Sprintf("%s is out of range: must be between %s and %s", f, lo, hi)
		}
	case "oneof":
		options := strings.Split(arg, "|")
		if !slices.Contains(options, strings.ToLower(fmt.Sprint(v))) {
			return fmt.Sprintf("%q is not one of %s", v, strings.Join(options, ", "))
		}
	default:
		panic("config: unknown check " + k.check + " on " + k.path)
	}
	return ""
}

func toNumber(v any) (float64, bool) {
	switch x := v.(type) {
	case int:
		return float64(x), true
	case float64:
		return x, true
	}
	return 0, false
}

func mustFloat(s string) float64 {
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		panic("config: bad check bound " + s)
	}
	return f
}

// pathOf is the key path of the field ptr points at in cfg: cross-key
// rules name their keys by field, never by a typed-out path.
func (s *schema) pathOf(cfg *Config, ptr any) string {
	want := reflect.ValueOf(ptr).Pointer()
	root := reflect.ValueOf(cfg).Elem()
	for _, k := range s.leaves {
		if root.FieldByIndex(k.index).Addr().Pointer() == want {
			return k.path
		}
	}
	panic("config: pathOf: not a field of the configuration")
}
