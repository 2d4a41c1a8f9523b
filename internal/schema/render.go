package schema

import (
	"fmt"
	"reflect"
	"regexp"
	"strings"
)

// Render is how a job declares its statements and renders them once: the
// job's SQL is a struct type with one exported string field per statement
// (a field may also be an array or struct of them), and texts a value of
// it holding the templates. Render returns the copy rendered for n (nil:
// the reference schema), every statement once, when the job is built.
//
// A statement takes positional parameters ($1) or, past three of them,
// named ones (:name), bound with sqlx's named binding (store.Named). In a
// named statement sqlx reads "::" as an escaped colon, so a cast there is
// written CAST(x AS type); Render refuses a statement that mixes the two
// styles or holds a "::" beside a named parameter, so that the mistake is a
// panic when the job is built (by any test that builds it), not a syntax
// error on the server.
func Render[T any](n *Names, texts T) T {
	if n == nil {
		n = ReferenceNames()
	}
	v := reflect.ValueOf(&texts).Elem()
	renderValue(v, n, v.Type().String())
	return texts
}

func renderValue(v reflect.Value, n *Names, path string) {
	switch v.Kind() {
	case reflect.String:
		if !v.CanSet() {
			panic("schema: statement " + path + " is not exported: Render cannot set it")
		}
		text := n.SQL(v.String())
		if err := checkParameters(text); err != nil {
			panic(fmt.Sprintf("schema: statement %s: %v", path, err))
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
	namedParameter      = regexp.MustCompile(`(^|[^:]):[A-Za-z_]`)
	positionalParameter = regexp.MustCompile(`\$[0-9]`)
)

// checkParameters refuses a statement sqlx's named binding would garble.
func checkParameters(text string) error {
	body, literals := splitLiterals(text)
	if !namedParameter.MatchString(body) {
		return nil
	}
	switch {
	case positionalParameter.MatchString(body):
		return fmt.Errorf("both named (:name) and positional ($n) parameters")
	case strings.Contains(body, "::"):
		return fmt.Errorf(`a "::" cast beside named parameters: write CAST(x AS type)`)
	case strings.Contains(literals, ":"):
		return fmt.Errorf("a colon in a literal beside named parameters: sqlx would read it as one")
	}
	return nil
}

// splitLiterals is text without its quoted literals and comments, where a
// colon means nothing to PostgreSQL, and those literals.
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
			}
		default:
			b.WriteByte(text[i])
		}
	}
	return b.String(), l.String()
}
