// Package config loads the daemon's view of the agent's agent.yaml.
//
// The file belongs to the agent stack: its supersession keys live under
// memory.pipelineV2 (Signet's names) and the daemon's own settings under
// maintenance. Keys elsewhere are the agent's and are ignored; an unknown key
// under maintenance is an error, because a typo there would otherwise fall
// back to a default without anyone noticing.
//
// The Config struct is the single source of truth for key names: the set of
// known keys, their types and their canonical spelling are derived from its
// koanf tags, so the loader, the environment overrides and the tests cannot
// drift apart. Values are converted per key, so an error names the key path,
// the offending value and the rule (`maintenance.compaction.staleAfter:
// "ten" is not a duration`), in the manner of Litestream.
//
// Every Load is a fresh parse on top of Default(): a key deleted from the file
// really returns to its default on reload. A Config is never mutated after
// Load returns; the daemon swaps whole configs atomically (see package daemon).
package config
