package schema

import (
	"fmt"
	"reflect"
	"regexp"
	"strings"

	"github.com/jmoiron/sqlx"
)

// Render is how a job declares its statements and renders them once: the
// job's SQL is a struct type with one exported string field per statement
// (a field may also be an array or struct of them), and texts a value of
// it holding the templates. Render returns the copy rendered for n (nil:
// the reference schema), every statement once, when the job is built.
//
// A statement takes positional parameters ($1) or, past three of them,
// named ones (:name): such a statement is a Named field, which Render also
// compiles once, with sqlx's named binding, to PostgreSQL's positional form
// (Bind then only orders a call's arguments). sqlx reads "::" as an escaped
// colon, so a cast in a named statement is written CAST(x AS type); Render
// refuses a named statement that mixes the two styles, holds a "::" or a
// colon in a literal or comment, or names no parameter, and a string statement that
// names one, so that the mistake is a panic when the job is built (by any
// test that builds it), not a syntax error on the server.
func Render[T any](n *Names, texts T) T {
	if n == nil {
		n = ReferenceNames()
	}
	v := reflect.ValueOf(&texts).Elem()
	renderValue(v, n, v.Type().String())
	return texts
}

// namedType is Named's type, which Render compiles.
var namedType = reflect.TypeFor[Named]()

func renderValue(v reflect.Value, n *Names, path string) {
	if v.Type() == namedType {
		if !v.CanSet() {
			panic("schema: statement " + path + " is not exported: Render cannot set it")
		}
		st, err := compileNamed(n.SQL(v.Interface().(Named).text))
		if err != nil {
			panic(fmt.Sprintf("schema: statement %s: %v", path, err))
		}
		v.Set(reflect.ValueOf(st))
		return
	}
	switch v.Kind() {
	case reflect.String:
		if !v.CanSet() {
			panic("schema: statement " + path + " is not exported: Render cannot set it")
		}
		text := n.SQL(v.String())
		if body, _ := splitLiterals(text); namedParameter.MatchString(body) {
			panic(fmt.Sprintf("schema: statement %s names its parameters: declare it schema.Named", path))
		}
		v.SetString(text)
	case reflect.Struct:
		for i := range v.NumField() {
			renderValue(v.Field(i), n, path+"."+v.Type().Field(i).Name)
		}
	case reflect.Array:
		for i := range v.Len() {
			renderValue(v.Index(i), n, fmt.Sprintf("%s[%d]", path, i))
		}
	default:
		panic(fmt.Sprintf("schema: statement %s is a %s, not a string", path, v.Kind()))
	}
}

var (
	namedParameter      = regexp.MustCompile(`(^|[^:]):([A-Za-z_][A-Za-z0-9_.]*)`)
	positionalParameter = regexp.MustCompile(`\$[0-9]`)
)

// Named is a statement whose parameters are named (:name). Declare it with
// NamedSQL; Render compiles it once, and Bind orders the arguments of a
// call.
type Named struct {
	text  string   // the template, before Render
	query string   // rendered, $n in place of each :name
	names []string // the name each $n stands for
}

// NamedSQL declares a statement template with named parameters.
func NamedSQL(text string) Named { return Named{text: text} }

// Bind is the statement and its arguments for a call: args holds a value
// for every name the statement uses.
func (s Named) Bind(args map[string]any) (string, []any, error) {
	if s.query == "" {
		return "", nil, fmt.Errorf("schema: a named statement used before Render")
	}
	out := make([]any, len(s.names))
	for i, name := range s.names {
		v, ok := args[name]
		if !ok {
			return "", nil, fmt.Errorf("schema: no value for the statement's parameter :%s", name)
		}
		out[i] = v
	}
	return s.query, out, nil
}

// compileNamed checks a rendered named statement and compiles it with
// sqlx's named binding, once: bound with each name for a value, it gives
// the positional statement and, in order, the names its parameters take.
func compileNamed(text string) (Named, error) {
	if err := checkParameters(text); err != nil {
		return Named{}, err
	}
	probe := map[string]any{}
	body, _ := splitLiterals(text)
	for _, m := range namedParameter.FindAllStringSubmatch(body, -1) {
		probe[m[2]] = m[2]
	}
	query, args, err := sqlx.BindNamed(sqlx.DOLLAR, text, probe)
	if err != nil {
		return Named{}, err
	}
	st := Named{text: text, query: query, names: make([]string, len(args))}
	for i, a := range args {
		st.names[i] = a.(string)
	}
	return st, nil
}

// checkParameters refuses a statement sqlx's named binding would garble.
func checkParameters(text string) error {
	body, literals := splitLiterals(text)
	if !namedParameter.MatchString(body) {
		return fmt.Errorf("a named statement without a named parameter")
	}
	switch {
	case positionalParameter.MatchString(body):
		return fmt.Errorf("both named (:name) and positional ($n) parameters")
	case strings.Contains(body, "::"):
		return fmt.Errorf(`a "::" cast beside named parameters: write CAST(x AS type)`)
	case strings.Contains(literals, ":"):
		return fmt.Errorf("a colon in a literal or a comment beside named parameters: sqlx would read it as one")
	}
	return nil
}

// splitLiterals is text without its quoted literals and comments, where a
// colon means nothing to PostgreSQL (but sqlx would read one), and those
// literals and comments.
func splitLiterals(text string) (body, literals string) {
	var b, l strings.Builder
	for i := 0; i < len(text); i++ {
		switch {
		case text[i] == '\'':
			for i++; i < len(text) && text[i] != '\''; i++ {
				l.WriteByte(text[i])
			}
		case strings.HasPrefix(text[i:], "--"):
			for ; i < len(text) && text[i] != '\n'; i++ {
				l.WriteByte(text[i])
			}
		default:
			b.WriteByte(text[i])
		}
	}
	return b.String(), l.String()
}
