package config

import (
	"fmt"
	"os"
	"regexp"
	"strings"

	"go.yaml.in/yaml/v3"
)

var yamlLine = regexp.MustCompile(`line (\d+): `)

// yamlError makes a YAML syntax error point at the line that broke the
// document. The YAML parser reports some errors ("did not find expected
// key") at the line where the enclosing mapping began, which for agent.yaml
// is usually line 1 or 2, whatever the line at fault. The first prefix of the
// file, in whole lines, that fails with the same problem ends at the line
// that introduced it; that line is named and quoted.
func yamlError(path string, err error) error {
	msg := err.Error()
	loc := yamlLine.FindStringSubmatchIndex(msg)
	if loc == nil {
		return err
	}
	problem := msg[loc[1]:]
	raw, rerr := os.ReadFile(path)
	if rerr != nil {
		return err
	}
	lines := strings.SplitAfter(string(raw), "\n")
	for n := 1; n <= len(lines); n++ {
		var tree map[string]any
		perr := yaml.Unmarshal([]byte(strings.Join(lines[:n], "")), &tree)
		if perr == nil {
			continue
		}
		pm := perr.Error()
		if l := yamlLine.FindStringIndex(pm); l != nil && pm[l[1]:] == problem {
			text := strings.TrimRight(lines[n-1], "\r\n")
			return fmt.Errorf("yaml: line %d: %s (the line reads %q)", n, problem, text)
		}
	}
	return err
}
