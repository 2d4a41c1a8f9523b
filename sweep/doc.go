// Package sweep is the periodic supersession sweep: the catch-up path that
// finds contradictions the inline hook never saw (attributes classified
// before the daemon was installed, or while it was down).
//
// It walks every (agent, aspect) with two or more active non-constraint
// attributes in keyset order, a batch at a time: one query finds the next
// aspects after the cursor (an index-only scan of the sibling index) and
// loads all their active attributes, so the number of queries grows with the
// number of batches, never with the number of aspects. Pairs are decided in
// Go by the supersession engine and written in short transactions.
//
// A scheduled run has a time budget (most of the interval to the next tick)
// and stores its cursor in supersessiond_state after every batch, so a sweep
// over millions of attributes proceeds across runs and survives restarts and
// kill -9: a batch is decided and written before the cursor moves past it,
// and re-deciding a batch is harmless because every write is guarded. A
// `sweep --once` from the command line is a full pass of its own and leaves
// the daemon's cursor alone.
package sweep
