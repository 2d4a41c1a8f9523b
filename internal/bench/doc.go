// Package bench holds what the bench command (cmd/supersessiond-bench) and
// the jobs' Go benchmarks measure against: generators of realistic synthetic
// agent databases at scale, and the naive baselines the daemon is compared
// with. The baselines are faithful renderings of how the systems in the
// seeds work (one query per aspect, as Signet's sweep; one dependent query
// per document, as Honcho PR #457), kept here so that every reported ratio
// can be reproduced, and so that nothing in the daemon itself depends on
// them.
//
// Generators use set-based SQL or COPY and a fixed random seed: the same
// flags give the same database, so figures are comparable across runs.
package bench
