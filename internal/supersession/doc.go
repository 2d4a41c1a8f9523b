// Package supersession is the decision-and-write engine shared by the
// periodic sweep (package sweep), the inline post-classify hook (package
// inline) and the operator commands (package audit).
//
// Deciding. Siblings are the active attributes with the same agent_id and
// aspect_id. For every eligible old attribute the engine looks at its newer
// siblings newest first and takes the first whose contradiction confidence
// reaches supersessionMinConfidence: each old attribute is superseded at most
// once, by the newest active attribute that contradicts it, and since "newer"
// is a strict order on (created_at, id) there can be no cycle. When none
// reaches the threshold, the newest pair in the review band
// [supersessionReviewConfidence, supersessionMinConfidence) becomes a
// proposal for a human. Constraints are never on either side; protected
// attributes are never superseded (they may supersede others); a pair a
// reviewer rejected is never applied automatically, and an attribute an
// operator restored with undo is never retired automatically by a sibling
// recorded (created_at) at or before the undo: the operator said it is still
// true, so only a newer statement may retire it (Vetoes).
//
// The heuristics decide first (package heuristics, on statements analysed
// once per attribute, not once per pair). Only when no heuristic decided a
// pair (no signal at or above the review band), the semantic fallback is
// enabled and configured, and the gate admits the pair is the LLM asked.
// The gate (gate.go) is the aspect, every undecided pair (the default), or
// Signet's rule, pairs sharing at least three content tokens.
//
// The store. Every statement that reads or writes the agent's attributes,
// its aspects' names or the supersession rows of its history is the
// attribute store's (attributes.go); the engine, the change feed and the
// operator's commands ask it for rows. On the stores real stacks keep their
// facts in (SPEC §14: Honcho's documents, mem0's collection) it answers the
// same questions with the store's own statements (stores_sql.go): a scope
// is the aspect, retirement is the stack's own, and the retired row is kept
// in the history for undo.
//
// Windows (window.go; SPEC §13) are how the judge asks: a window is
// statements of one aspect, oldest first, shown to the LLM as numbered
// lines, and the pending pairs its answer settles; planWindows covers the
// pairs a plan leaves with windows of at most maxStatements, each pair
// settled by exactly one, and a window's key is a hash of the prompt
// version, the model and its content. Process asks one request per window
// (semantic.go): a window is read from supersessiond.llm_windows
// (llmwindows.go) and, unless answered, claimed (busy or backing off:
// deferred), within the run's and the hour's budget (llm_spend, shared by
// the replicas), in one short transaction; the LLM is asked after it
// commits, the answer stored the moment it arrives, a failure backing off
// per window. A window not answered leaves its pairs "no contradiction for
// now" and its group Unsettled, so the aspect stays recorded as changed and
// a later pass asks. The inline hook asks nothing itself: it decides on its
// narrowed read with the heuristics alone and hands the aspects it decided
// to the bounded background asker (asker.go, Reading.Ask), which reads them
// whole off the hook's path and asks the windows of the classified
// attributes' pairs; the aspects stay recorded as owed an answer
// (OwedAttribute) until it is answered, and the sweep decides with the
// answers stored. JudgeWindows decides a group the same way with no
// database (`eval --llm`).
//
// Enforcement (enforce.go; SPEC §13). Under earned, a live decision is
// applied only when its rule (its strongest heuristic signal, or
// llm:<model>) has earned it from reviews; otherwise it is a proposal in
// probation naming the rule. The rules' records are read once per batch.
// The policy (gate, window size, hourly budget, enforcement) is read once
// per pass (Policy, made by the daemon).
//
// Writing. A supersession is one SQL statement (so one transaction) that
// locks the old row, re-checks everything the decision assumed (old still
// active, attribute kind, not protected, same content; new still active,
// same aspect, same content), updates it and inserts its
// attribute_superseded history row with the undo snapshot. A row whose
// guard fails is simply not changed: repeats and races are no-ops. Proposals
// are inserted with ON CONFLICT against a unique index, never
// read-then-write, so each (old, new) pair has at most one proposal ever,
// whatever runs concurrently.
//
// A dry run (Pass.DryRun, `sweep --once --dry-run`) takes the same path and
// stops where the writing begins: it reads siblings, vetoes, stored answers
// and the proposals that exist, may ask the LLM, and writes nothing, not
// even the verdict it was given; its decisions are what a real pass writes.
//
// The change feed (feed.go): the change records the trigger appends, read
// by the incremental sweep and the inline hook through one protocol: take a
// snapshot, load what the changes can meet through the key digests, decide,
// then store the keys of what was decided and consume the records in one
// statement. A record goes only with the keys that let the next reader
// find its attribute.
//
// The change log: every supersession applied (by the sweep, the inline
// hook or an operator) is one log line with its ids and clipped contents;
// proposals are one line per written batch; at debug level every pair the
// plan examines is a line (changelog.go).
package supersession
