// Package llm is the one OpenAI-compatible chat-completions client the daemon
// uses, for semantic contradiction checks and for re-compacting trimmed
// conversation (SPEC §8).
//
// The semantic check asks about a window of one aspect (SPEC §13): its
// statements as numbered lines, `[n] YYYY-MM-DD: text`, oldest first, each
// flattened to one line inside delimiters that mark them as data; the reply
// puts its reasoning before the retirements it names, and every retirement
// is checked against the window (a number not listed, an older that is not
// older, a constraint on either side are ignored and counted). A window's
// cache key hashes the prompt it makes, the model and WindowPromptVersion.
// Each answer carries what it cost (the reply's `usage`) and its latency.
//
// Everything about it assumes the model and the server are unreliable: every
// call has a timeout, calls in flight are bounded by a semaphore, response
// bodies are size-capped, and replies are parsed leniently (code fences,
// <think> blocks and prose around the JSON object are tolerated). A reply
// that still cannot be understood is an *Error of kind KindGarbage: callers
// count it and move on ("no contradiction", "retry later"); nothing here
// panics or blocks a job.
//
// The client is never called inside a database transaction; the callers
// guarantee that (and their tests check it), because a network wait inside a
// transaction holds row locks the agent's own writes may need.
package llm
