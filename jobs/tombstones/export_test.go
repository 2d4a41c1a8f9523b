package tombstones

// SetBeforeWrite installs a hook run in each live batch after its dependent
// check and before its writes, with the phase ("triage" or "release"). Tests
// use it to break the database connection, or cancel the pass, mid-batch.
func SetBeforeWrite(j *Job, f func(phase string)) { j.hooks.beforeWrite = f }
