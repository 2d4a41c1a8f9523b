// Package detect is the line protocol of `supersessiond detect` and
// `supersessiond eval` (SPEC §6): JSON lines of attribute pairs in, one JSON
// decision per line out, and the precision/recall scoring of labelled pairs.
//
// Design:
//   - Lines are read with a bufio.Reader, not a Scanner, so that a line of
//     any length up to MaxLineBytes is handled; a longer line becomes an
//     error object and reading goes on with the next line.
//   - Output keeps input order: one object per non-blank input line. Blank
//     (whitespace-only) lines carry no pair and produce no output; this is
//     the usual JSON Lines reading and keeps trailing newlines harmless.
//   - A line that is not a JSON object, lacks "older" or "newer", or has a
//     malformed optional field (a time that is not RFC 3339, an unknown
//     kind) yields {"id":...,"error":"..."} on its line; processing
//     continues and the caller learns how many lines failed.
//   - The decision itself is heuristics.Decide; this package only parses,
//     thresholds (supersede = not blocked and confidence ≥ min) and prints.
package detect
