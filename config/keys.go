package config

import (
	"fmt"
	"reflect"
	"sort"
	"strings"
	"time"
)

// key describes one leaf of Config: its canonical dotted path (as written in
// agent.yaml) and where it lives in the struct.
type key struct {
	path  string
	index []int
	typ   reflect.Type
}

// schema is the set of keys Config knows, derived once from its koanf tags so
// that the struct is the single source of truth for names.
type schema struct {
	leaves   map[string]key    // lower-cased path → key
	sections map[string]string // lower-cased section path → canonical path
}

var durationType = reflect.TypeOf(time.Duration(0))

func newSchema() *schema {
	s := &schema{leaves: map[string]key{}, sections: map[string]string{}}
	s.walk(reflect.TypeOf(Config{}), "", nil)
	return s
}

func (s *schema) walk(t reflect.Type, prefix string, index []int) {
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		name := f.Tag.Get("koanf")
		if name == "" {
			continue
		}
		path := name
		if prefix != "" {
			path = prefix + "." + name
		}
		idx := append(append([]int(nil), index...), i)
		if f.Type.Kind() == reflect.Struct && f.Type != durationType {
			s.sections[strings.ToLower(path)] = path
			s.walk(f.Type, path, idx)
			continue
		}
		s.leaves[strings.ToLower(path)] = key{path: path, index: idx, typ: f.Type}
	}
}

// Keys returns every canonical leaf key path, sorted.
func Keys() []string {
	s := newSchema()
	out := make([]string, 0, len(s.leaves))
	for _, k := range s.leaves {
		out = append(out, k.path)
	}
	sort.Strings(out)
	return out
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
