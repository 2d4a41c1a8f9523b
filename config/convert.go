package config

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

func describe(raw any) string {
	switch v := raw.(type) {
	case string:
		return strconv.Quote(v)
	case map[string]any:
		return "a mapping"
	case []any:
		return "a list"
	case nil:
		return "null"
	default:
		return fmt.Sprint(v)
	}
}

func toBool(raw any) (bool, error) {
	switch v := raw.(type) {
	case bool:
		return v, nil
	case string:
		b, err := strconv.ParseBool(strings.TrimSpace(v))
		if err != nil {
			return false, fmt.Errorf("%s is not a boolean: use true or false", describe(raw))
		}
		return b, nil
	}
	return false, fmt.Errorf("%s is not a boolean: use true or false", describe(raw))
}

func toFloat(raw any) (float64, error) {
	var f float64
	switch v := raw.(type) {
	case float64:
		f = v
	case float32:
		f = float64(v)
	case int:
		f = float64(v)
	case int64:
		f = float64(v)
	case uint64:
		f = float64(v)
	case string:
		p, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
		if err != nil {
			return 0, fmt.Errorf("%s is not a number", describe(raw))
		}
		f = p
	default:
		return 0, fmt.Errorf("%s is not a number", describe(raw))
	}
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return 0, fmt.Errorf("%s is not a finite number", describe(raw))
	}
	return f, nil
}

func toInt(raw any) (int, error) {
	switch v := raw.(type) {
	case int:
		return v, nil
	case int64:
		if v > math.MaxInt32 || v < math.MinInt32 {
			return 0, fmt.Errorf("%d is out of range", v)
		}
		return int(v), nil
	case uint64:
		if v > math.MaxInt32 {
			return 0, fmt.Errorf("%d is out of range", v)
		}
		return int(v), nil
	case float64:
		if v != math.Trunc(v) || v > math.MaxInt32 || v < math.MinInt32 {
			return 0, fmt.Errorf("%s is not a whole number", describe(raw))
		}
		return int(v), nil
	case string:
		n, err := strconv.Atoi(strings.TrimSpace(v))
		if err != nil {
			return 0, fmt.Errorf("%s is not a whole number", describe(raw))
		}
		return n, nil
	}
	return 0, fmt.Errorf("%s is not a whole number", describe(raw))
}

func toString(raw any) (string, error) {
	switch v := raw.(type) {
	case string:
		return v, nil
	case bool, int, int64, uint64, float64:
		return fmt.Sprint(v), nil
	}
	return "", fmt.Errorf("%s is not a string", describe(raw))
}

func toDuration(raw any) (time.Duration, error) {
	switch v := raw.(type) {
	case string:
		d, err := time.ParseDuration(strings.TrimSpace(v))
		if err != nil {
			return 0, fmt.Errorf("%s is not a duration: write it with a unit, like 30s, 10m or 1h", describe(raw))
		}
		return d, nil
	case int, int64, uint64, float64:
		if fmt.Sprint(v) == "0" {
			return 0, nil
		}
		return 0, fmt.Errorf("%v is not a duration: write it with a unit, like %vs or %vm", v, v, v)
	}
	return 0, fmt.Errorf("%s is not a duration: write it with a unit, like 30s, 10m or 1h", describe(raw))
}

// toTokens reads maintenance.http.tokens: a YAML list of {name, env}, or
// from the environment (and the default tag) "name=ENV,name=ENV"; empty is
// none.
func toTokens(raw any) (Tokens, error) {
	const form = "write a list of {name: NAME, env: ENV_VAR} (from the environment: NAME=ENV_VAR,NAME=ENV_VAR)"
	var out Tokens
	switch v := raw.(type) {
	case string:
		for _, part := range strings.Split(v, ",") {
			if part = strings.TrimSpace(part); part == "" {
				continue
			}
			name, env, ok := strings.Cut(part, "=")
			if !ok {
				return nil, fmt.Errorf("%q is not NAME=ENV_VAR: %s", part, form)
			}
			out = append(out, NamedToken{Name: strings.TrimSpace(name), Env: strings.TrimSpace(env)})
		}
	case []any:
		for i, item := range v {
			m, ok := item.(map[string]any)
			if !ok {
				return nil, fmt.Errorf("item %d is %s, not a mapping: %s", i+1, describe(item), form)
			}
			var t NamedToken
			for key, val := range m {
				s, err := toString(val)
				if err != nil {
					return nil, fmt.Errorf("item %d: %s: %v", i+1, key, err)
				}
				switch strings.ToLower(key) {
				case "name":
					t.Name = s
				case "env":
					t.Env = s
				default:
					return nil, fmt.Errorf("item %d: unknown key %q (known: name, env)", i+1, key)
				}
			}
			out = append(out, t)
		}
	default:
		return nil, fmt.Errorf("%s is not a list: %s", describe(raw), form)
	}
	return out, nil
}

// toList reads a list of words: a YAML list, or one string of words
// separated by commas (the environment's form, and the default tag's).
// Each word is trimmed; empty ones are dropped.
func toList(raw any) (List, error) {
	out := List{}
	add := func(item any, i int) error {
		s, err := toString(item)
		if err != nil {
			return fmt.Errorf("item %d: %v", i+1, err)
		}
		for _, w := range strings.Split(s, ",") {
			if w = strings.TrimSpace(w); w != "" {
				out = append(out, w)
			}
		}
		return nil
	}
	switch v := raw.(type) {
	case []any:
		for i, item := range v {
			if err := add(item, i); err != nil {
				return nil, err
			}
		}
	case nil:
	default:
		if err := add(v, 0); err != nil {
			return nil, fmt.Errorf("%s is not a list of words: write [a, b] (from the environment: a,b)", describe(raw))
		}
	}
	return out, nil
}
