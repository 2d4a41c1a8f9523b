package schema

import "fmt"

// The compaction job where it cannot re-compact (SPEC §14): clawbolt keeps
// its conversations encrypted at rest and has no memories table, so the
// job watches its compaction events instead of retrying them. Watching
// reads the events table alone, with the columns below, and writes nothing
// of the stack's: no column is added to it, no history row written; the
// daemon's own cursors and leases are all it keeps.

// watchColumns are what the watch reads: the owner column is clawbolt's
// user_id.
var watchColumns = []colReq{
	{table: CompactionEvents, name: "id", types: intTypes},
	{table: CompactionEvents, name: "user_id", types: textTypes},
	{table: CompactionEvents, name: "triggered_at", types: timeTypes},
	{table: CompactionEvents, name: "status", types: textTypes},
	{table: CompactionEvents, name: "retry_count", types: intTypes},
	{table: CompactionEvents, name: "min_message_seq", types: intTypes},
	{table: CompactionEvents, name: "max_message_seq", types: intTypes},
}

// watchIndexes: the pending events by age (clawbolt's own index on
// triggered_at serves).
var watchIndexes = []IndexSpec{compactionIndexes[0]}

var watchPrivileges = []privilege{{table: CompactionEvents, kind: "SELECT"}}

// watching reports whether the compaction job only watches on this
// database: clawbolt's compaction tables. Set by Inspect.
func (p Plan) watching(job Job) bool { return job == Compaction && p.watchCompaction }

// watchShape notes what the watch does on the stack it recognised, and how
// to stop it.
func (l *Layout) watchShape(r *Report) {
	r.Notes = append(r.Notes, fmt.Sprintf("watching only: this is clawbolt's schema (%s.user_id, messages keyed by session_id with bodies encrypted at rest, "+
		"no memories table), which the daemon cannot re-compact; it counts and lists the events pending past staleAfter and those at "+
		"clawbolt's own retry cap (maintenance.compaction.stackMaxAttempts), retries none and writes nothing of the stack's; "+
		"to stop watching: %s", l.Tables[CompactionEvents].Display(), offSetting[Compaction]))
}
