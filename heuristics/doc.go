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
// belongs to. After the copula of a noun slot ("Favourite movie is ...",
// "Timezone is ..."), the value is read whatever the class of its words: a
// verb there is the value unless a preposition follows ("Favourite sport is
// cycling", but "Office is based in Berlin"), and a capitalised word is a
// name, not a function word ("Favourite movie is Her", "... is May").
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
// # Blocking: which pairs can contradict
//
// The sweep compares every attribute of an aspect with every newer sibling,
// and aspects hold thousands. Most pairs cannot contradict, and each signal
// says why: Statement.BlockKeys turns each signal's necessary conditions
// into keys, anchors (under which a statement is indexed) and probes (which
// it looks up), so that an engine finds the candidate pairs through an index
// instead of deciding all of them. The contract the engine relies on:
//
//	for all statements a, b: if DecideAnalyzed(a, b) or DecideAnalyzed(b, a)
//	fires a signal, then probes(a) ∩ anchors(b) ≠ ∅ or probes(b) ∩ anchors(a) ≠ ∅.
//
// Keys are hashes of exactly what the signals compare (sets of stems, slot
// numbers, flags): what a signal requires to be equal hashes equal, so the
// contract holds whatever the collisions (which only add candidates). Per
// signal:
//
//   - negation_polarity: the affirmative side anchors (subject, irrealis,
//     verb, w) for each word w of its predicate; the negated side probes
//     with one word of its predicate, which the affirmative one must contain.
//   - antonym: for each antonym pair p and side s of a word of the main
//     clause, anchor (p, s, subject without p's words, negation, irrealis, w)
//     for each predicate word w and "empty", and probe the other side with
//     one predicate word: of two statements that fire, the one whose
//     predicate is contained in the other's finds it.
//   - value_conflict: a one-value slot (slot, subject or slot words,
//     irrealis, time scope) is probed by a statement that can be the older
//     one (one-value predicate) and anchored by one that can be the newer
//     (not an addition); neither may be negated or past.
//   - temporal_supersession: a current fact anchors its subject, its subject
//     and verb, and its words; a change probes its subject (change verb),
//     its subject and verb ("now", "instead"), or the words it changes from.
//
// So a big aspect of affirmative, many-valued statements without antonyms
// or changes ("Visited Lisbon in 2019", "Speaks Korean", "Likes figs")
// yields no candidate at all. Statement.ContentKeys does the same for the
// semantic fallback: one key per distinct content word, so that the pairs
// sharing at least three (SharedContentTokens) share three keys.
//
// The contract is tested on every pair of both corpora, on all pairs of
// statements recombined from the lexicon and the corpora, and by a fuzz
// target (block_test.go).
//
// # Invariants
//
//   - Analysis is plain code: the text is lowercased and split into words
//     once, each word looked up in the lexicon (a map) or stemmed, and the
//     frame read from the words. The sweep analyses each attribute once and
//     decides only the candidate pairs that blocking finds, so neither
//     Analyze nor Decide is on a path where a nanosecond matters.
//   - The signals compare sets of words by stem, as bitmaps of token
//     indexes.
//   - Work is bounded: content past 400 bytes or 48 tokens is ignored.
//   - Statements are immutable after Analyze; the lexicon is built once at
//     package initialisation and only read afterwards, so everything here is
//     safe for concurrent use.
//   - No vocabulary here names a test sentence: the tables are general
//     English lexicons.
package heuristics
