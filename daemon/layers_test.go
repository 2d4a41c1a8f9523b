package daemon_test

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// Nothing below the daemon imports config: the daemon makes each layer's
// settings of a loaded configuration (SettingsOf), once per load, and only
// the daemon and the commands walk agent.yaml's tree.
func TestNothingBelowTheDaemonImportsConfig(t *testing.T) {
	t.Parallel()
	const module = "github.com/supersessiond/supersessiond"
	cmd := exec.Command("go", "list", "-f", `{{.ImportPath}} {{join .Imports " "}}`, "./...")
	cmd.Dir = ".."
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	allowed := func(pkg string) bool {
		return pkg == module+"/config" || pkg == module+"/daemon" || strings.HasPrefix(pkg, module+"/cmd/")
	}
	var listed int
	for line := range strings.SplitSeq(strings.TrimSpace(string(out)), "\n") {
		fields := strings.Fields(line)
		listed++
		if !allowed(fields[0]) && slices.Contains(fields[1:], module+"/config") {
			t.Errorf("%s imports config: give it a settings struct of its own, made in daemon.SettingsOf", fields[0])
		}
	}
	if listed < 20 {
		t.Fatalf("go list listed %d packages: is the module root right?", listed)
	}
}
