// Package heuristics decides whether a newer attribute of an agent's memory
// contradicts an older one about the same aspect, without a database, a
// clock or a network: pure functions over the two texts, their creation
// times and their kinds.
//
// # How a statement is read
//
// An attribute ("Lives in Toronto", "Doesn't drink coffee anymore", "Main
// editor is Neovim") is tokenised (Unicode letters and digits; apostrophes
// inside words; numbers such as 1,800 and 7:30 kept whole; invalid UTF-8 as a
// separator), stemmed crudely but consistently, and looked up in a lexicon
// of function words, negations, markers (now, instead, also, started,
// plans...), known verbs and their forms, attribute nouns (rent, timezone,
// manager) and antonyms (package antonyms). From that, Analyze reads a
// frame: subject, verb chain (auxiliaries, negation, change and cessation
// verbs), main verb, predicate (a table of single-valued predicates such as
// "lives in", "works at", "reports to" and multi-valued ones such as
// "speaks", "plays", "owns"), value, qualifiers, and the slot the value
// belongs to.
//
// # The four signals
//
//   - negation_polarity: one side denies what the other asserts, about the
//     same subject and verb, and the denied content is contained in the
//     asserted one ("doesn't drink black tea" does not deny "drinks green
//     tea"). Cessation ("quit", "stopped", "gave up", "used to") counts as
//     negation.
//   - antonym: the statements are the same once a pair of opposite words is
//     set aside ("notifications are enabled/disabled"); opposite words about
//     different subjects are not a contradiction.
//   - value_conflict: the same single-valued slot with values that neither
//     contain nor refine each other; multi-valued predicates never conflict.
//   - temporal_supersession: the newer says something changed (switched,
//     moved, migrated, now, instead) and the change lands on what the older
//     says; additions ("also", "started", "recently began") do not.
//
// Every signal that fires is reported; the decision's confidence is the
// maximum. Confidences are calibrated against the engine's thresholds: sure
// contradictions score ≥ 0.75, plausible changes whose slot is a guess score
// in [0.5, 0.7) so that they become proposals for review, and compatible
// pairs fire nothing. Constraints are never superseded.
//
// # Invariants
//
//   - No allocation while analysing: a Statement holds its own fixed
//     buffers (text, stems, tokens); Decide keeps both on the stack and
//     allocates only the signals and sentences of its result.
//   - Work is bounded: content past 400 bytes or 48 tokens is ignored.
//   - Statements are immutable after Analyze; the lexicon is built once at
//     package initialisation and only read afterwards, so everything here is
//     safe for concurrent use.
//   - No vocabulary here names a test sentence: the tables are general
//     English lexicons.
package heuristics
