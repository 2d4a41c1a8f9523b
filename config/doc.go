// Package config loads the daemon's view of the agent's agent.yaml.
//
// The file belongs to the agent stack: its supersession keys live under
// memory.pipelineV2 (Signet's names) and the daemon's own settings under
// maintenance. Keys elsewhere are the agent's and are ignored; an unknown key
// under maintenance is an error, because a typo there would otherwise fall
// back to a default without anyone noticing.
//
// The Config struct is the single source of truth for keys: the set of known
// keys, their types and their canonical spelling are derived from its key
// tags, so the loader, the environment overrides and the tests cannot drift
// apart. Values are converted per key, so an error names the key path, the
// offending value and the rule (`maintenance.compaction.staleAfter: "ten" is
// not a duration`), in the manner of Litestream.
//
// The loader is written here, on yaml.v3 and the environment, rather than on
// a configuration library: what it must do (match keys without regard to
// case, ignore the agent's keys but refuse unknown ones under maintenance,
// take defaults and rules from tags, word each conversion error for the
// operator) is most of what such a library would be asked to do, and none
// of it is what one does by default.
//
// Every Load is a fresh parse on top of Default(): a key deleted from the file
// really returns to its default on reload. A Config is never mutated after
// Load returns; the daemon swaps whole configs atomically (see package daemon).
// Only the daemon and the commands import this package: the daemon makes
// each layer's settings of a Config (daemon.SettingsOf).
package config
