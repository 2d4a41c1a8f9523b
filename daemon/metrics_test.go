package daemon_test

import (
	"fmt"
	"strings"
	"syscall"
	"testing"

	"github.com/supersessiond/supersessiond/daemon"
	"github.com/supersessiond/supersessiond/internal/testkit/pgtest"
)

// Every job's series exist from the start, at zero, so that an alert on "no
// success for a while" works for a daemon that never succeeded; the
// interval the alerts measure that in follows the schedules in force; and
// the ready gauge is kept without anyone probing /readyz.
func TestJobSeriesExistFromTheStart(t *testing.T) {
	t.Parallel()
	db := pgtest.New(t)
	// Schedules that do not fire while the test runs.
	schedules := `
  schedules:
    sweep: "@every 8760h"
    compactionRetry: "0 0 1 1 *"
    tombstones: "%s"
`
	standardJobs := func(o *daemon.Options) { o.Jobs = nil }
	h := start(t, db.URL, fmt.Sprintf(schedules, "off"), nil, standardJobs)

	_, body := h.get("/metrics")
	var want []string
	for _, job := range []string{"sweep", "compaction", "tombstones"} {
		for _, result := range []string{"ok", "error", "skipped"} {
			want = append(want, fmt.Sprintf(`supersessiond_job_runs_total{job=%q,result=%q} 0`, job, result))
		}
		want = append(want,
			fmt.Sprintf(`supersessiond_job_errors_total{job=%q} 0`, job),
			fmt.Sprintf(`supersessiond_job_duration_seconds_count{job=%q} 0`, job),
			fmt.Sprintf(`supersessiond_job_duration_seconds_bucket{job=%q,le="+Inf"} 0`, job),
			fmt.Sprintf(`supersessiond_job_last_success_timestamp_seconds{job=%q} 0`, job),
		)
	}
	want = append(want,
		`supersessiond_job_interval_seconds{job="tombstones"} 0`, // off
		`supersessiond_config_reloads_total{result="ok"} 0`,
		`supersessiond_config_reloads_total{result="error"} 0`,
	)
	for _, w := range want {
		if !strings.Contains(body, w) {
			t.Errorf("/metrics lacks %s", w)
		}
	}
	if t.Failed() {
		t.Fatalf("/metrics:\n%s", body)
	}
	// The schedules are applied just after /metrics starts answering.
	h.eventually("the intervals of the schedules", func() bool {
		_, body := h.get("/metrics")
		return strings.Contains(body, `supersessiond_job_interval_seconds{job="sweep"} 3.1536e+07`) &&
			strings.Contains(body, `supersessiond_job_interval_seconds{job="compaction"} 3.`) // 365 or 366 days
	})

	// The health loop keeps the ready gauge; nobody asks /readyz here.
	h.eventually("supersessiond_ready 1 without a probe", func() bool {
		_, body := h.get("/metrics")
		return strings.Contains(body, "supersessiond_ready 1")
	})

	h.write(fmt.Sprintf(baseYAML, db.URL) + fmt.Sprintf(schedules, "17 * * * *"))
	h.signals <- syscall.SIGHUP
	h.eventually("the tombstones interval after the reload", func() bool {
		_, body := h.get("/metrics")
		return strings.Contains(body, `supersessiond_job_interval_seconds{job="tombstones"} 3600`)
	})
}
