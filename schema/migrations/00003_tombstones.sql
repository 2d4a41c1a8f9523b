-- Tombstone reconciliation reads the GIN index on documents.source_ids once
-- per batch, with the ids of a whole batch (?|). With GIN's default
-- fastupdate, new entries (every document the agent inserts, every
-- tombstone the job preserves: a non-HOT update re-inserts its entries) go
-- to a pending list of up to 4 MB that every search scans linearly, for each
-- of its keys. Measured on 1,000,000 documents: the dependent query of a
-- 500-tombstone batch took 127 ms with the 11,000 entries a pass had left
-- pending, 11 ms without, and the whole pass 12.3 s against 3.5 s. Without
-- fastupdate each insert goes straight into the tree: a few microseconds
-- more per document written, for an agent that writes documents at the
-- pace of its LLM.

-- +goose Up
ALTER INDEX supersessiond_documents_source_ids SET (fastupdate = off);
-- Entries already pending stay pending until flushed: flush them now.
SELECT gin_clean_pending_list('supersessiond_documents_source_ids');

-- +goose Down
ALTER INDEX supersessiond_documents_source_ids RESET (fastupdate);
