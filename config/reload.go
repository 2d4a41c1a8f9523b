package config

import (
	"fmt"
	"reflect"
	"strings"
)

// RestartKeys are the keys a running daemon cannot apply, in the order
// Config declares them: those declared reload:"restart" (on the key, or on
// a section for every key below it). The daemon binds them at startup
// (connections, the listener and the console, the log's encoder, the
// tables' names); a reload keeps their running values and names each one
// the file changed.
func RestartKeys() []string {
	var out []string
	for _, k := range newSchema().ordered {
		if k.restart {
			out = append(out, k.path)
		}
	}
	return out
}

// Reload is what a running daemon makes of next, a configuration loaded
// while running runs: next, with every restart key (RestartKeys) as running
// has it, so that the configuration in force always describes what runs;
// and the restart keys whose values next changes, which only a restart
// applies. Neither configuration is changed.
func Reload(running, next *Config) (inForce *Config, restart []string) {
	out := *next
	was, now := reflect.ValueOf(running).Elem(), reflect.ValueOf(&out).Elem()
	for _, k := range newSchema().ordered {
		if !k.restart {
			continue
		}
		old, edited := was.FieldByIndex(k.index), now.FieldByIndex(k.index)
		if !reflect.DeepEqual(old.Interface(), edited.Interface()) {
			restart = append(restart, k.path)
		}
		edited.Set(old)
	}
	return &out, restart
}

// Judgment names what a decision depends on besides the rows and the
// heuristics: the keys declared judgment:"always" (the thresholds, the
// mode), and those declared judgment:"semantic" while the semantic
// fallback is in effect (whether it is, and the model it asks), each as
// name=value in declaration order. A sweep records it with a complete
// pass; a different one calls for a full pass (SPEC §11).
func (c *Config) Judgment() string {
	v := reflect.ValueOf(c).Elem()
	var parts []string
	for _, k := range newSchema().ordered {
		if k.judgment == "always" || (k.judgment == "semantic" && c.SemanticFallback()) {
			parts = append(parts, fmt.Sprintf("%s=%v", k.path[strings.LastIndexByte(k.path, '.')+1:], v.FieldByIndex(k.index).Interface()))
		}
	}
	if !c.SemanticFallback() {
		parts = append(parts, "semantic fallback off")
	}
	return strings.Join(parts, "; ")
}
