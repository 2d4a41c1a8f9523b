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
// re-deciding is harmless because every write is guarded.
//
// Each batch is a reader of the engine's change feed (supersession.Feed),
// as an incremental sweep is: it loads, of each aspect, only what its
// classifications and the aspect's unconsumed change records can meet
// through the key digests, and stores the keys of what it decided with
// the consumption of those records, so the digests stay whole between
// sweeps.
//
// With the semantic fallback on, a batch decides in the same way, with the
// heuristics alone, and never waits for the LLM (SPEC §13): the statement
// that consumes its change records records each aspect it decided anew as
// owed the LLM's answer, and the engine's background asker
// (supersession.Engine.AskLater) reads those aspects whole, off the hook's
// path, and asks about the pairs of the classified attributes the
// heuristics leave undecided. An aspect with nothing to ask, or whose
// answers retire nothing, is then settled; the others stay owed, and the
// sweep reads them whole and decides with the answers stored. The asker
// holds two batches at once; the aspects of a batch beyond them go to the
// sweep at once (deferred: later). Reading the aspects whole on the hook's
// path, as an earlier release did, held up the heuristic decisions by
// seconds at 500 classifications/s.
//
// A batch that fails consumes nothing: its claims are given back at once
// and no drain starts until a pause has passed (exponential from 0.5 s to
// 30 s, with jitter), so a busy server is not asked again at every
// classification. Only a row's own fault (store.RowFault: a constraint of
// the stack's, bad data) is skipped inside a batch; a refusal of the
// server's (too many connections, disk full, out of memory) stops it. A
// failure that is the server's (store.Transient) is not counted as an
// attempt at the rows; a row that keeps failing for another reason is
// given up after a few attempts, logged and counted (its change record
// stays: the sweep will still see its attribute).
//
// Before each batch the hook waits until the database has connection
// slots to spare (store.Guard), and the LISTEN connection is opened and
// reopened only when there is room for it: a crowded server's last slots
// are the agent's. Polling covers the hook while it has no listener.
//
// Lag, from the classification (the trigger's clock_timestamp) to the
// decision's commit, is the supersessiond_inline_lag_seconds histogram.
package inline
