// Package heuristics decides whether a newer attribute of an agent's memory
// contradicts an older one about the same aspect, without a database, a
// clock or a network: pure functions over the two texts, their creation
// times and their kinds.
//
// # How a statement is read
//
// Analyze lowercases and splits an attribute into words, looks each up in
// the lexicon (function words, markers, verbs and their forms, one-value
// nouns, and package antonyms' pairs from WordNet) or stems it, marks the
// time anchors ("until next year"), and splits the words into clauses: at
// sentence punctuation, and at a comma or a coordinator when a verb follows
// ("Left Acme in March and joined Globex"). Each clause is read as a frame:
// subject, verb chain (auxiliaries, negation, cessation, change verbs,
// markers), main verb, predicate, value and slot. The subject model makes
// I, the user, she and they one subject; a passive with an agent reads as
// the active; "key: value" is the key's copula; a one-value slot comes from
// a predicate table ("lives in", "works at") or the head noun of a copula's
// subject ("the staging timeout is"). A graph store's relation names are
// read as the verb phrases they name ("REPORTS_TO" is "reports to"), and
// Input.Aspect, the aspect's name, says which slot the statements fill and
// whether it holds one value or many ("home city"; "hobbies").
//
// # The four signals
//
// They compare a clause of the older statement with a clause of the newer:
//
//   - negation_polarity: one denies what the other asserts, same subject and
//     verb, the denied words contained in the asserted ones; cessation
//     ("quit", "used to") is a negation; so is the end of a thing the older
//     speaks of ("sold", "paid off", "decommissioned", "put on hold").
//   - antonym: the same once a pair of opposite words is set aside; a word
//     of a subject, or one that says which object of a many-valued verb
//     ("owns small boats"), names a thing rather than opposing a state.
//   - value_conflict: the same one-value slot with values that neither equal
//     nor refine each other; or a measure of the same thing restated (a
//     number of the same kind of unit, "raised to 1000 mg").
//   - temporal_supersession: the newer says something changed (switched,
//     replaced by, instead of, now) and the change lands on the older; or
//     the older is pending (a plan, an evaluation, a pause) and the newer
//     tells how it came out.
//
// The decision's confidence is the maximum over the signals that fired, on
// the strongest pair of clauses. Sure contradictions score ≥ 0.75; changes
// whose slot is a guess score in [0.5, 0.7), the review band; compatible
// pairs fire nothing. Constraints are never superseded.
//
// # Blocking
//
// Statement.BlockKeys turns each signal's necessary conditions into keys,
// anchors and probes, so that an engine finds the candidate pairs of an
// aspect through an index instead of deciding all of them. The contract:
//
//	for all statements a, b: if DecideAnalyzed(a, b) or DecideAnalyzed(b, a)
//	fires a signal, then probes(a) ∩ anchors(b) ≠ ∅ or probes(b) ∩ anchors(a) ≠ ∅.
//
// Keys hash exactly what a signal requires to be equal, so collisions only
// add candidates. block_test.go checks the contract on every pair of the
// corpora, on generated statements and by fuzzing; docs/heuristics.md has
// the keys of each signal and the figures.
//
// # Invariants
//
//   - Work is bounded: content past 400 bytes or 48 tokens is ignored.
//   - Statements are immutable after Analyze; the lexicon is built once, on
//     first use, and only read afterwards; Analyze and BlockKeys
//     take their scratch space from a sync.Pool, one per call: everything
//     here is safe for concurrent use.
//   - The code is plain: the sweep analyses each attribute once and decides
//     only blocked candidate pairs, so no path here needs tricks for speed.
//   - No vocabulary here names a test sentence: the tables are general
//     English lexicons.
//   - A bug that some content reaches does not escape: a panic of Analyze,
//     BlockKeys or DecideAnalyzed is recovered, the statement reads as
//     nothing (Statement.Failure says why, it has no keys) and the decision
//     is blocked (BlockedFailure). One statement never stops a pass, and a
//     failing one decides nothing; the engine counts and logs it.
package heuristics
