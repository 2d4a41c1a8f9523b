// Package sweep is the periodic supersession sweep: the catch-up path that
// finds contradictions the inline hook never saw (attributes classified
// before the daemon was installed or while it was down, edited, reactivated
// by an undo, un-protected).
//
// A pass is full or incremental (SPEC §11). A full pass reads every active
// attribute in the order of the sibling index, 20,000 rows per statement,
// one batch ahead of the decisions (read and analysed while the previous
// batch is decided and written), and keeps no snapshot open across the
// pass. An incremental pass examines only the aspects the change records
// name: the trigger appends one in the transaction that changes an
// attribute, so changes made while no daemon runs are not lost. The
// records are the engine's change feed (supersession.Feed): the protocol
// that claims them, narrows through the key digests, and consumes them
// with the keys of what was decided is the feed's, shared with the inline
// hook.
//
// Invariants:
//   - A full pass runs when none has completed, when the judgment changes
//     (heuristics.Version, the thresholds, the LLM fallback, the mode), every
//     fullSweepEvery and on --full; otherwise a scheduled pass is
//     incremental.
//   - A change record is deleted only after its aspect was decided after it
//     was committed: an incremental pass deletes the records it claimed
//     (and records again an aspect the LLM still owes an answer); a complete
//     full pass deletes those its starting snapshot saw.
//   - Two passes never split one aspect's records, and never examine one
//     record twice; the claims of a pass that died expire.
//   - A scheduled full pass stores its cursor after every batch and resumes
//     there (kill -9, the time budget): a batch is written before the cursor
//     moves past it, and deciding a batch twice is harmless because every
//     write is guarded. `sweep --once` leaves the cursor alone.
package sweep
