package tombstones

// The statements of `reconcile --restore`, which puts back documents a pass
// hard-deleted, from the copies deleteSQL and releaseSQL kept.

// deletionsSQL finds the latest recorded deletion of each document named
// ($1) or deleted by the pass named ($2).
const deletionsSQL = `
SELECT DISTINCT ON (document_id)
       seq, run_id, document_id, workspace_name, content_sha256, phase, deleted_at, purged_at, restored_at,
       coalesce(document::text, '') AS document
FROM {{.Deleted}}
WHERE document_id = ANY($1::text[]) OR run_id = $2
ORDER BY document_id, seq DESC`

// documentColumnsSQL lists the documents table's columns a row can be
// written to (not dropped, not generated), as its catalog names them.
const documentColumnsSQL = `
SELECT a.attname
FROM pg_attribute a
WHERE a.attrelid = '{{.Documents}}'::regclass AND a.attnum > 0 AND NOT a.attisdropped AND a.attgenerated = ''
ORDER BY a.attnum`

// restoreSQL re-inserts one kept row ($1, jsonb). The column list
// (columnsMark, quoted) is the kept row's keys that the table still has, so a column added
// since takes its default and one dropped since is left out; each value is
// read back by the column's own type from its JSON form, which is what makes
// the row the same, byte for byte (an identity column gets its old value:
// OVERRIDING SYSTEM VALUE). A document with the same id (or another unique
// key) that exists now is left alone: no row comes back.
const restoreSQL = `
INSERT INTO {{.Documents}} (` + columnsMark + `) OVERRIDING SYSTEM VALUE
SELECT ` + columnsMark + ` FROM jsonb_populate_record(NULL::{{.Documents}}, $1::jsonb)
ON CONFLICT DO NOTHING
RETURNING 1`

// columnsMark is where restoreSQL's column list goes.
const columnsMark = "/*columns*/"

// documentExistsSQL asks whether a document with the id exists (a dry run's
// stand-in for restoreSQL's conflict).
const documentExistsSQL = `
SELECT EXISTS (SELECT 1 FROM {{.Documents}} WHERE id::text = $1)`

// markRestoredSQL records that a deletion was restored.
const markRestoredSQL = `
UPDATE {{.Deleted}} SET restored_at = now() WHERE seq = $1`
