// Package storetest builds databases shaped like the stores real agent
// stacks keep their facts in (SPEC §14), for tests and the bench: Honcho's
// documents and the tables they hang from, and mem0's pgvector collection;
// and inserts rows the way those stacks write them.
//
// The shapes come from reading the stacks' code (plastic-labs/honcho's
// models and Alembic migrations at ddbb90e3, with PR #952's
// document_sources at 7aea397f; mem0ai/mem0's vector_stores/pgvector.py and
// memory/main.py at 8d5b7865): column names, types, defaults, CHECKs,
// foreign keys and indexes carry over, code does not. Where the server has
// no pgvector, an embedding column is real[] instead of vector(N) and the
// indexes only pgvector can build (HNSW) are left out, as for the
// tombstone fixtures in testdata/stacks; the daemon never reads an
// embedding, it only keeps and restores it.
//
// Nothing here imports package testing: the bench builds its Honcho-shaped
// database with the same DDL the tests check against the stacks' facts.
package storetest
