// Package schema is the daemon's knowledge of the database it runs against:
// which of the agent's tables each job needs, where they are and what shape
// they have, the daemon's own objects, and the migrations that add them.
//
// Real agent databases are not the reference schema (SPEC §4). A stack has
// some of its tables, under its own names, in a schema of its own, and its
// releases change them. So nothing here assumes: Inspect reads the catalog
// for one configuration (the Plan: which jobs are on, maintenance.tables,
// maintenance.database.schema and ownSchema) and reports, per job, whether
// it can run — off, ok, what migrate must add, what is missing or
// incompatible (a table, a column, a type, a constraint, a privilege), and
// which rows the stack's constraints would refuse. A database that passes
// check never fails at run time for a schema reason.
//
// Invariants:
//   - Each job needs only its own tables; a job that is off needs nothing,
//     and migrate adds nothing for it.
//   - The daemon's own tables live in their own schema. In the agent's
//     schema it adds only the columns SPEC §4 marks as added, indexes (never
//     one the stack already has an equivalent of) and the classification
//     trigger, whose function runs as its owner so the agent's role needs no
//     grant on the daemon's schema.
//   - Identifiers come from the catalog or from validated configuration and
//     are always quoted. Statements are templates over Names, rendered once
//     per job: {{.History}} is the stack's history table, {{meta "h"}} its
//     metadata column as jsonb whether it is declared jsonb, json or text.
//   - Where adapting is cheap and safe (metadata as text, source_ids as a
//     text array, a document_sources edge table, no superseded_by, a
//     partial unique index on idempotency keys) the jobs adapt; otherwise
//     check refuses, saying what to change or which setting turns the job
//     off.
//   - Migrate only adds, holds an advisory lock so concurrent runs serialise,
//     and moves an earlier release's tables (kept in the agent's schema)
//     into the own schema with their rows.
//   - Remove (migrate --remove) takes the same lock and drops only what is
//     the daemon's: the trigger and its function, the indexes it names on
//     the agent's tables (name, table, uniqueness and method as migrate
//     makes them), its own tables and schema. The added columns and every
//     row of the agent's stay.
package schema
