// Package audit holds what an operator does with the daemon day to day: read
// the trail (history), decide on proposals (review), act on them (apply),
// take a supersession back (undo), supersede by hand (supersede) and pin
// attributes (protect).
//
// Lessons taken from vestige and omem (see the seeds): every operation that
// changes an attribute is one transaction that re-checks, under row locks,
// everything the operator saw (so two processes applying one proposal apply
// it once, and an undo of a row that changed since is refused rather than
// clobbering the change); a multi-row supersede is all or nothing; every
// change writes its history row in the same transaction, with what is needed
// to reverse it. Unique indexes make "once" a database fact: one review per
// proposal, one application per proposal, one revert per supersession.
//
// Every row these commands write names who decided (Ops.As): the channel
// in changed_by (supersessiond:cli, :console, :api), the console session
// and the request in session_id and request_id, the operator's name and
// how it is known in the metadata (operator, operator_source); the queue
// reads them back as Who.
//
// Refusals (a changed row, an already-superseded row without --force-chain,
// ids of another agent, a protected row, mutationsFrozen) are *Refusal
// errors, which the CLI turns into exit code 4. shadowMode does not stop
// these commands: reviewing and applying proposals is the shadow-mode
// workflow. mutationsFrozen stops every one that would change agent data.
package audit
