-- Supersession engine: the semantic-verdict cache and the lookups that keep
-- automatic supersession from overriding a human.

-- +goose Up

-- LLM verdicts per (old content, new content, model), so that no pair is
-- ever asked twice, across runs, restarts and replicas. Keyed by SHA-256 of
-- the exact contents: an edited attribute is a new question.
CREATE TABLE IF NOT EXISTS supersessiond_llm_verdicts (
  old_hash bytea NOT NULL,
  new_hash bytea NOT NULL,
  model text NOT NULL,
  contradicts boolean NOT NULL,
  confidence real NOT NULL,
  reasoning text,
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (old_hash, new_hash, model)
);

-- Vetoes: a pair a reviewer rejected, or a supersession an operator undid,
-- is never applied again by the sweep or the inline hook. The sweep looks
-- them up per batch by old attribute id; the inline hook by either side of
-- the attributes it was woken for.
CREATE INDEX IF NOT EXISTS supersessiond_history_vetoes
  ON memory_history ((metadata ->> 'old_attribute_id'), (metadata ->> 'new_attribute_id'))
  WHERE event IN ('supersession_proposal_rejected', 'supersession_reverted');
CREATE INDEX IF NOT EXISTS supersessiond_history_vetoes_new
  ON memory_history ((metadata ->> 'new_attribute_id'))
  WHERE event IN ('supersession_proposal_rejected', 'supersession_reverted');

-- +goose Down
DROP INDEX IF EXISTS supersessiond_history_vetoes_new;
DROP INDEX IF EXISTS supersessiond_history_vetoes;
DROP TABLE IF EXISTS supersessiond_llm_verdicts;
