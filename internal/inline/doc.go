// Package inline is the post-classify hook: the moment the agent's
// classifier gives an attribute its aspect_id, the attribute is decided
// against its active siblings, with the same engine as the sweep.
//
// Nothing can be missed. The trigger installed by migrate appends a row to
// the outbox table supersessiond_classified in the same transaction that
// classifies the attribute, and sends a NOTIFY. The notification is only a
// wake-up hint: the hook drains the outbox on every notification, on a
// fallback poll (maintenance.inlineHook.pollInterval) and right after the
// listener reconnects (lib/pq delivers a nil notification then), so a lost
// notification, a dropped connection, a restarted database or a stopped
// daemon only delays a decision, never loses it.
//
// Claims are leases on outbox rows (claimed_by, claimed_until), taken with
// FOR UPDATE SKIP LOCKED, so several daemons (and the two drains one
// daemon runs at once) drain one outbox without handling a row twice at
// once; a daemon that dies mid-batch leaves claims that expire and are
// taken again. A row is deleted only after its decision is written, and
// re-deciding is harmless because every write is guarded. A row that keeps
// failing is given up after a few attempts, logged and counted (the sweep
// will still see its attribute).
//
// Lag, from the classification (the trigger's clock_timestamp) to the
// decision's commit, is the supersessiond_inline_lag_seconds histogram.
package inline
