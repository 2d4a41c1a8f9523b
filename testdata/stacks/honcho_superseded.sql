-- honcho_superseded.sql: fixture shaped like a Honcho PostgreSQL database.
-- Shape: Honcho PR #457 head (c4c7e770): e4eba9cfaa6f + a3f7b9d2c1e4 (superseded_by text NULL,
-- partial index). PR #457 was NOT merged (open, refs/pull/457 only).
-- Schema: honcho (Honcho defaults to public; configurable with DB_SCHEMA / [db] SCHEMA): the tests load it into a schema of its own.
-- Harness contract: replace __VECTOR_TYPE__ with vector(1536) or real[]; drop every
--   '-- BEGIN PGVECTOR' .. '-- END PGVECTOR' block when pgvector is absent.
-- Facts and sources in NOTES.md; the tables and rows every shape shares are in the INCLUDEd parts.
--
-- Expected tombstone reconciliation (SPEC sections 5 and 9, minAge 5m, run right after load):
--   rule: superseded_by present (PR #457): preserved iff superseded_by IS NOT NULL and a
--   live document of the same workspace cites it in documents.source_ids.
-- EXPECT preserved: U0vJaA9O5LKLaih39wKNv SiSvJW8TjQ6s4ILiHXRd0 TKIPhfUZ5Y5iysHqNNUJq mtuxZasDvKjtn8XMF4vR6 QwE6qtuETF5RnmFMxIxCN ShJZSKttZIBEoC8_Dk8Hq
-- EXPECT deleted: 7ZyVsDt86BYKNwrBh6n3q afyxUDdnFUkbZ5fzj-JNB 8gzJmukmicKmwMIHwMM4K ghUBn-1RDeST9GVanwGzM EUEGE1rRgGOzrhp6pRSnj Oj85CxKCiuh-4-JwwPNXm qbLj7CWRWun-nooMei5Sl
-- EXPECT untouched: sSvq1WazssPlr7jXtt6cd ds7n_pF66DcJVTRnGR4ve
--   (untouched = soft-deleted less than minAge ago)
--   by key: preserved T01,T08,T09,T12,T13,X03; deleted T02,T03,T04,T05,T06,T07,X05; untouched T10,T11
--   Follow-up pass: soft-delete L04 (deleted_at older than minAge) and T01 then becomes deletable.
--   NB: T08 is cited only from another collection (observer/observed) of the same workspace;
--   SPEC preserves it, PR #457's own reconciler (scoped by observer/observed) would delete it.
--   T12 already carries PR #457's internal_metadata.tombstone_preserved=true and a NULL embedding.
--   T06 is cited only by X01 of the other workspace: must not count.
--
-- Documents (key  id  role):
--   L01  j71T5Jml83D-VC0KrxbME  LIVE     W1  live
--   L02  4r9MNSCSjnGj-fj_aTQPx  LIVE     W1  live
--   L03  jOvmfNrJMzSuY1NYX3AAg  LIVE     W1  live; replacement of T01 and T09
--   L04  duUZ3KX-C7Lxjbm0YG6re  LIVE     W1  live; cites T01
--   L05  8e-mzwA8NvKJqYbGUsloU  LIVE     W1  live; replacement of T02
--   L06  kbeMlnT_2hruF3tUNvrgh  LIVE     W1  live; replacement of T03
--   L07  OLCDSx_TxLfoR8VOaU-wN  LIVE     W1  live; cites T04 (in edges_and_source_ids only through source_ids)
--   L08  LDCntANtGasBYuzGKFxBb  LIVE     W1  live; replacement of T06
--   L09  y0IlMZUwFo_YAgUoWN1of  LIVE     W1  live; replacement of T07
--   L10  Rl9Hr3RCy6SZW7Sdyzwyk  LIVE     W1  live; replacement of T08
--   L11  ktCZXGanbc0ZzkqkO6WLx  LIVE     W1  live, collection agent->bob; cites T08 of collection agent->alice (same workspace)
--   L12  BPuAcgNNr-8_vS8Yady9O  LIVE     W1  live; cites T09 among three sources
--   L13  wz_QKAjcZkelLH5sA3pWn  LIVE     W1  live; cites T12 (in edges_and_source_ids only through document_sources)
--   L14  LUPs-fIqCd6U_ddVs5WQt  LIVE     W1  live; cites T13 and an id that exists nowhere
--   L15  B-7PVala2gSedCD2lWieX  LIVE     W1  live; replacement of T12
--   L16  Czx_ExauZ9m8d3xnmk85P  LIVE     W1  live; replacement of T10
--   L17  K4Kf0719xDyaSQxyp2VOL  LIVE     W1  live; cites T10
--   L18  3JUuokbh7Y2YaXQVd9uy5  LIVE     W1  live, collection alice->alice
--   T01  U0vJaA9O5LKLaih39wKNv  DELETED  W1  superseded by L03; cited by live L04
--   T02  7ZyVsDt86BYKNwrBh6n3q  DELETED  W1  superseded by L05; cited only by soft-deleted T07
--   T03  afyxUDdnFUkbZ5fzj-JNB  DELETED  W1  superseded by L06; cited by nothing
--   T04  8gzJmukmicKmwMIHwMM4K  DELETED  W1  soft-deleted (forget request), not superseded; cited by live L07
--   T05  ghUBn-1RDeST9GVanwGzM  DELETED  W1  not superseded; cited by nothing
--   T06  EUEGE1rRgGOzrhp6pRSnj  DELETED  W1  superseded by L08; cited only by live X01 of workspace W2 (must not count)
--   T07  Oj85CxKCiuh-4-JwwPNXm  DELETED  W1  superseded by L09; cites T02; cited by nothing
--   T08  SiSvJW8TjQ6s4ILiHXRd0  DELETED  W1  superseded by L10; cited by live L11 of another collection in the same workspace
--   T09  TKIPhfUZ5Y5iysHqNNUJq  DELETED  W1  superseded by L03; cited by live L12 (one of three sources)
--   T10  sSvq1WazssPlr7jXtt6cd  DELETED  W1  superseded by L16 one minute ago; cited by live L17 (younger than minAge)
--   T11  ds7n_pF66DcJVTRnGR4ve  DELETED  W1  soft-deleted two minutes ago, not cited (younger than minAge)
--   T12  mtuxZasDvKjtn8XMF4vR6  DELETED  W1  superseded by L15; cited by live L13; in honcho_superseded already preserved by Honcho PR #457's own reconciler (internal_metadata.tombstone_preserved, embedding NULL)
--   T13  QwE6qtuETF5RnmFMxIxCN  DELETED  W1  superseded by an id that no longer exists (no FK); cited by live L14
--   X01  HSPDIjMhXPI1QMrT0j7c5  LIVE     W2  live; cites X02 and, across workspaces, T06
--   X02  IhcpK239cIDiECLijZM7C  LIVE     W2  live; replacement of X03
--   X03  ShJZSKttZIBEoC8_Dk8Hq  DELETED  W2  superseded by X02; cited by live X04
--   X04  7vDAIPWUGMiP_fSnHk-YH  LIVE     W2  live; cites X03
--   X05  qbLj7CWRWun-nooMei5Sl  DELETED  W2  not superseded; cited by nothing
--   dangling ids (no row anywhere): replacement _vxLkQaeJFInuYz2ZhYHA, source 9gPwrKMO8TK_FzoMPJEcL
-- Workspaces: W1 = acme-support, W2 = home-assistant.

BEGIN;

CREATE SCHEMA IF NOT EXISTS honcho;

-- BEGIN PGVECTOR
CREATE EXTENSION IF NOT EXISTS vector;
-- END PGVECTOR

CREATE TABLE honcho.alembic_version (
    version_num character varying(32) NOT NULL,
    CONSTRAINT alembic_version_pkc PRIMARY KEY (version_num)
);

-- INCLUDE honcho_tables.part.sql
CREATE TABLE honcho.documents (
    id text NOT NULL,
    internal_metadata jsonb DEFAULT '{}'::jsonb NOT NULL,
    content text NOT NULL,
    embedding __VECTOR_TYPE__,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    workspace_name text NOT NULL,
    session_name text,
    observer text NOT NULL,
    observed text NOT NULL,
    level text DEFAULT 'explicit'::text NOT NULL,
    times_derived integer DEFAULT 1 NOT NULL,
    source_ids jsonb,
    deleted_at timestamp with time zone,
    sync_state text DEFAULT 'pending'::text NOT NULL,
    last_sync_at timestamp with time zone,
    sync_attempts integer DEFAULT 0 NOT NULL,
    superseded_by text,
    CONSTRAINT pk_documents PRIMARY KEY (id),
    CONSTRAINT ck_documents_id_length CHECK (length(id) = 21),
    CONSTRAINT ck_documents_id_format CHECK (id ~ '^[A-Za-z0-9_-]+$'),
    CONSTRAINT ck_documents_content_length CHECK (length(content) <= 65535),
    CONSTRAINT fk_documents_workspace_name_workspaces FOREIGN KEY (workspace_name) REFERENCES honcho.workspaces (name),
    CONSTRAINT fk_documents_session_workspace FOREIGN KEY (session_name, workspace_name) REFERENCES honcho.sessions (name, workspace_name),
    CONSTRAINT fk_documents_observer_observed_workspace_name_collections FOREIGN KEY (observer, observed, workspace_name) REFERENCES honcho.collections (observer, observed, workspace_name),
    CONSTRAINT fk_documents_observer_workspace_name_peers FOREIGN KEY (observer, workspace_name) REFERENCES honcho.peers (name, workspace_name),
    CONSTRAINT fk_documents_observed_workspace_name_peers FOREIGN KEY (observed, workspace_name) REFERENCES honcho.peers (name, workspace_name)
);

CREATE INDEX ix_documents_created_at ON honcho.documents USING btree (created_at);

CREATE INDEX ix_documents_workspace_name ON honcho.documents USING btree (workspace_name);

CREATE INDEX ix_documents_session_name ON honcho.documents USING btree (session_name);

CREATE INDEX ix_documents_observer ON honcho.documents USING btree (observer);

CREATE INDEX ix_documents_observed ON honcho.documents USING btree (observed);

CREATE INDEX ix_documents_source_ids_gin ON honcho.documents USING gin (source_ids);

CREATE INDEX ix_documents_deleted_at ON honcho.documents USING btree (deleted_at) WHERE (deleted_at IS NOT NULL);

CREATE INDEX ix_documents_sync_state ON honcho.documents USING btree (sync_state);

CREATE INDEX ix_documents_sync_state_last_sync_at ON honcho.documents USING btree (sync_state, last_sync_at);

CREATE INDEX ix_documents_superseded_by ON honcho.documents USING btree (superseded_by) WHERE (superseded_by IS NOT NULL);

-- INCLUDE honcho_queue_tables.part.sql
INSERT INTO honcho.alembic_version (version_num) VALUES ('a3f7b9d2c1e4');

-- INCLUDE honcho_rows.part.sql
INSERT INTO honcho.documents (id, workspace_name, observer, observed, level, content, session_name, times_derived, internal_metadata, embedding, created_at, deleted_at, sync_state, last_sync_at, source_ids, superseded_by) VALUES
  -- L01: live
  ('j71T5Jml83D-VC0KrxbME', 'acme-support', 'agent', 'alice', 'explicit', 'Alice works at Acme Corp as a support lead.', 'support-thread-1042', 1, '{"message_ids": [1, 2]}'::jsonb || jsonb_build_object('message_created_at', to_char((now() - interval '64805 minutes') AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS')), pg_temp.fake_embedding(1), now() - interval '45 days', NULL, 'synced', now() - interval '45 days', NULL, NULL),
  -- L02: live
  ('4r9MNSCSjnGj-fj_aTQPx', 'acme-support', 'agent', 'alice', 'explicit', 'Alice prefers email over phone calls.', 'support-thread-1042', 2, '{"message_ids": [1, 2]}'::jsonb || jsonb_build_object('message_created_at', to_char((now() - interval '64805 minutes') AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS')), pg_temp.fake_embedding(2), now() - interval '45 days', NULL, 'synced', now() - interval '45 days', NULL, NULL),
  -- T01: superseded by L03; cited by live L04
  ('U0vJaA9O5LKLaih39wKNv', 'acme-support', 'agent', 'alice', 'explicit', 'Alice lives in Toronto.', 'support-thread-1042', 3, '{"message_ids": [1, 1]}'::jsonb || jsonb_build_object('message_created_at', to_char((now() - interval '64806 minutes') AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS')), pg_temp.fake_embedding(3), now() - interval '45 days', now() - interval '3 days', 'synced', now() - interval '45 days', NULL, 'jOvmfNrJMzSuY1NYX3AAg'),
  -- T08: superseded by L10; cited by live L11 of another collection in the same workspace
  ('SiSvJW8TjQ6s4ILiHXRd0', 'acme-support', 'agent', 'alice', 'explicit', 'Alice leads the support team in the Toronto office.', 'support-thread-1042', 1, '{"message_ids": [1, 1]}'::jsonb || jsonb_build_object('message_created_at', to_char((now() - interval '64806 minutes') AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS')), pg_temp.fake_embedding(4), now() - interval '45 days', now() - interval '3 days', 'synced', now() - interval '45 days', NULL, 'Rl9Hr3RCy6SZW7Sdyzwyk'),
  -- T09: superseded by L03; cited by live L12 (one of three sources)
  ('TKIPhfUZ5Y5iysHqNNUJq', 'acme-support', 'agent', 'alice', 'explicit', 'Alice''s shipping address is in Toronto.', 'support-thread-1042', 2, '{"message_ids": [1, 1]}'::jsonb || jsonb_build_object('message_created_at', to_char((now() - interval '64806 minutes') AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS')), pg_temp.fake_embedding(5), now() - interval '45 days', now() - interval '3 days', 'synced', now() - interval '45 days', NULL, 'jOvmfNrJMzSuY1NYX3AAg'),
  -- T12: superseded by L15; cited by live L13; in honcho_superseded already preserved by Honcho PR #457's own reconciler (internal_metadata.tombstone_preserved, embedding NULL)
  ('mtuxZasDvKjtn8XMF4vR6', 'acme-support', 'agent', 'alice', 'explicit', 'Alice''s billing city is Toronto.', 'support-thread-1042', 1, '{"message_ids": [1, 1], "tombstone_preserved": true}'::jsonb || jsonb_build_object('message_created_at', to_char((now() - interval '64806 minutes') AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS')), NULL, now() - interval '45 days', now() - interval '3 days', 'synced', now() - interval '45 days', NULL, 'B-7PVala2gSedCD2lWieX'),
  -- T02: superseded by L05; cited only by soft-deleted T07
  ('7ZyVsDt86BYKNwrBh6n3q', 'acme-support', 'agent', 'alice', 'explicit', 'Alice''s manager is Sam.', 'support-thread-1042', 1, '{"message_ids": [3, 3]}'::jsonb || jsonb_build_object('message_created_at', to_char((now() - interval '59043 minutes') AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS')), pg_temp.fake_embedding(7), now() - interval '41 days', now() - interval '3 days', 'synced', now() - interval '41 days', NULL, '8e-mzwA8NvKJqYbGUsloU'),
  -- T04: soft-deleted (forget request), not superseded; cited by live L07
  ('8gzJmukmicKmwMIHwMM4K', 'acme-support', 'agent', 'alice', 'explicit', 'Alice''s phone number is 416-555-0142.', 'support-thread-1042', 1, '{"message_ids": [3, 3]}'::jsonb || jsonb_build_object('message_created_at', to_char((now() - interval '59043 minutes') AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS')), pg_temp.fake_embedding(8), now() - interval '41 days', now() - interval '1 days', 'synced', now() - interval '41 days', NULL, NULL),
  -- T05: not superseded; cited by nothing
  ('ghUBn-1RDeST9GVanwGzM', 'acme-support', 'agent', 'alice', 'explicit', 'Alice mentioned a dentist appointment on Friday.', 'support-thread-1042', 1, '{"message_ids": [3, 3]}'::jsonb || jsonb_build_object('message_created_at', to_char((now() - interval '59043 minutes') AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS')), pg_temp.fake_embedding(9), now() - interval '41 days', now() - interval '1 days', 'synced', now() - interval '41 days', NULL, NULL),
  -- T06: superseded by L08; cited only by live X01 of workspace W2 (must not count)
  ('EUEGE1rRgGOzrhp6pRSnj', 'acme-support', 'agent', 'alice', 'explicit', 'Alice''s team is on the Basic plan.', 'support-thread-1042', 1, '{"message_ids": [3, 3]}'::jsonb || jsonb_build_object('message_created_at', to_char((now() - interval '59043 minutes') AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS')), pg_temp.fake_embedding(10), now() - interval '41 days', now() - interval '2920 minutes', 'synced', now() - interval '41 days', NULL, 'LDCntANtGasBYuzGKFxBb'),
  -- T13: superseded by an id that no longer exists (no FK); cited by live L14
  ('QwE6qtuETF5RnmFMxIxCN', 'acme-support', 'agent', 'alice', 'explicit', 'Acme Corp is on invoicing template v1.', 'support-thread-1042', 1, '{"message_ids": [3, 3]}'::jsonb || jsonb_build_object('message_created_at', to_char((now() - interval '59043 minutes') AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS')), pg_temp.fake_embedding(11), now() - interval '41 days', now() - interval '3 days', 'synced', now() - interval '41 days', NULL, '_vxLkQaeJFInuYz2ZhYHA'),
  -- T07: superseded by L09; cites T02; cited by nothing
  ('Oj85CxKCiuh-4-JwwPNXm', 'acme-support', 'agent', 'alice', 'deductive', 'Approval requests from Alice''s team go to Sam.', NULL, 1, '{"message_ids": [3, 4], "source_ids": ["7ZyVsDt86BYKNwrBh6n3q", "j71T5Jml83D-VC0KrxbME"], "premises": ["Alice''s manager is Sam.", "Alice works at Acme Corp as a support lead."]}'::jsonb || jsonb_build_object('message_created_at', to_char((now() - interval '59042 minutes') AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS')), pg_temp.fake_embedding(12), now() - interval '40 days', now() - interval '2900 minutes', 'synced', now() - interval '40 days', '["7ZyVsDt86BYKNwrBh6n3q", "j71T5Jml83D-VC0KrxbME"]'::jsonb, 'y0IlMZUwFo_YAgUoWN1of'),
  -- L04: live; cites T01
  ('duUZ3KX-C7Lxjbm0YG6re', 'acme-support', 'agent', 'alice', 'deductive', 'Alice''s working hours are probably on Eastern Time.', NULL, 1, '{"message_ids": [1, 2], "source_ids": ["U0vJaA9O5LKLaih39wKNv", "j71T5Jml83D-VC0KrxbME"], "premises": ["Alice lives in Toronto.", "Alice works at Acme Corp as a support lead."]}'::jsonb || jsonb_build_object('message_created_at', to_char((now() - interval '64805 minutes') AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS')), pg_temp.fake_embedding(13), now() - interval '38 days', NULL, 'synced', now() - interval '38 days', '["U0vJaA9O5LKLaih39wKNv", "j71T5Jml83D-VC0KrxbME"]'::jsonb, NULL),
  -- T03: superseded by L06; cited by nothing
  ('afyxUDdnFUkbZ5fzj-JNB', 'acme-support', 'agent', 'alice', 'explicit', 'Alice''s order #88412 is in transit.', 'support-thread-1042', 1, '{"message_ids": [5, 6]}'::jsonb || jsonb_build_object('message_created_at', to_char((now() - interval '14401 minutes') AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS')), pg_temp.fake_embedding(14), now() - interval '10 days', now() - interval '2910 minutes', 'synced', now() - interval '10 days', NULL, 'kbeMlnT_2hruF3tUNvrgh'),
  -- T10: superseded by L16 one minute ago; cited by live L17 (younger than minAge)
  ('sSvq1WazssPlr7jXtt6cd', 'acme-support', 'agent', 'alice', 'explicit', 'Alice''s preferred contact window is 9-11am Eastern.', 'support-thread-1042', 1, '{"message_ids": [5, 5]}'::jsonb || jsonb_build_object('message_created_at', to_char((now() - interval '14402 minutes') AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS')), pg_temp.fake_embedding(15), now() - interval '10 days', now() - interval '1 minutes', 'synced', now() - interval '10 days', NULL, 'Czx_ExauZ9m8d3xnmk85P'),
  -- T11: soft-deleted two minutes ago, not cited (younger than minAge)
  ('ds7n_pF66DcJVTRnGR4ve', 'acme-support', 'agent', 'alice', 'explicit', 'Alice asked about the refund policy.', 'support-thread-1042', 1, '{"message_ids": [5, 6]}'::jsonb || jsonb_build_object('message_created_at', to_char((now() - interval '14401 minutes') AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS')), pg_temp.fake_embedding(16), now() - interval '10 days', now() - interval '2 minutes', 'synced', now() - interval '10 days', NULL, NULL),
  -- X03: superseded by X02; cited by live X04
  ('ShJZSKttZIBEoC8_Dk8Hq', 'home-assistant', 'agent', 'alice', 'explicit', 'Alice takes cow''s milk in her coffee.', 'kitchen-chat', 1, '{"message_ids": [15, 15]}'::jsonb || jsonb_build_object('message_created_at', to_char((now() - interval '8645 minutes') AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS')), pg_temp.fake_embedding(17), now() - interval '6 days', now() - interval '5 days', 'synced', now() - interval '6 days', NULL, 'IhcpK239cIDiECLijZM7C'),
  -- X05: not superseded; cited by nothing
  ('qbLj7CWRWun-nooMei5Sl', 'home-assistant', 'agent', 'alice', 'explicit', 'Alice''s shopping list has eggs on it.', 'kitchen-chat', 1, '{"message_ids": [15, 16]}'::jsonb || jsonb_build_object('message_created_at', to_char((now() - interval '8644 minutes') AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS')), pg_temp.fake_embedding(18), now() - interval '6 days', now() - interval '4 days', 'synced', now() - interval '6 days', NULL, NULL),
  -- X02: live; replacement of X03
  ('IhcpK239cIDiECLijZM7C', 'home-assistant', 'agent', 'alice', 'explicit', 'Alice is lactose intolerant.', 'kitchen-chat', 1, '{"message_ids": [17, 17]}'::jsonb || jsonb_build_object('message_created_at', to_char((now() - interval '7215 minutes') AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS')), pg_temp.fake_embedding(19), now() - interval '7210 minutes', NULL, 'synced', now() - interval '7210 minutes', NULL, NULL),
  -- X01: live; cites X02 and, across workspaces, T06
  ('HSPDIjMhXPI1QMrT0j7c5', 'home-assistant', 'agent', 'alice', 'deductive', 'Alice would rather have oat milk than dairy.', NULL, 1, '{"message_ids": [17, 18], "source_ids": ["IhcpK239cIDiECLijZM7C", "EUEGE1rRgGOzrhp6pRSnj"], "premises": ["Alice is lactose intolerant.", "Alice''s team is on the Basic plan."]}'::jsonb || jsonb_build_object('message_created_at', to_char((now() - interval '7214 minutes') AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS')), pg_temp.fake_embedding(20), now() - interval '5 days', NULL, 'synced', now() - interval '5 days', '["IhcpK239cIDiECLijZM7C", "EUEGE1rRgGOzrhp6pRSnj"]'::jsonb, NULL),
  -- L14: live; cites T13 and an id that exists nowhere
  ('LUPs-fIqCd6U_ddVs5WQt', 'acme-support', 'agent', 'alice', 'deductive', 'Alice''s invoices should use the Pro invoicing template.', NULL, 1, '{"message_ids": [3, 4], "source_ids": ["QwE6qtuETF5RnmFMxIxCN", "9gPwrKMO8TK_FzoMPJEcL"], "premises": ["Acme Corp is on invoicing template v1.", "(unknown premise)"]}'::jsonb || jsonb_build_object('message_created_at', to_char((now() - interval '59042 minutes') AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS')), pg_temp.fake_embedding(21), now() - interval '4350 minutes', NULL, 'synced', now() - interval '4350 minutes', '["QwE6qtuETF5RnmFMxIxCN", "9gPwrKMO8TK_FzoMPJEcL"]'::jsonb, NULL),
  -- L11: live, collection agent->bob; cites T08 of collection agent->alice (same workspace)
  ('ktCZXGanbc0ZzkqkO6WLx', 'acme-support', 'agent', 'bob', 'deductive', 'Bob''s team lead used to work from the Toronto office.', NULL, 1, '{"message_ids": [13, 14], "source_ids": ["SiSvJW8TjQ6s4ILiHXRd0"], "premises": ["Alice leads the support team in the Toronto office."]}'::jsonb || jsonb_build_object('message_created_at', to_char((now() - interval '4344 minutes') AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS')), pg_temp.fake_embedding(22), now() - interval '4340 minutes', NULL, 'synced', now() - interval '4340 minutes', '["SiSvJW8TjQ6s4ILiHXRd0"]'::jsonb, NULL),
  -- L03: live; replacement of T01 and T09
  ('jOvmfNrJMzSuY1NYX3AAg', 'acme-support', 'agent', 'alice', 'explicit', 'Alice lives in Vancouver.', 'support-thread-1042', 1, '{"message_ids": [7, 8]}'::jsonb || jsonb_build_object('message_created_at', to_char((now() - interval '4331 minutes') AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS')), pg_temp.fake_embedding(23), now() - interval '4330 minutes', NULL, 'synced', now() - interval '4330 minutes', NULL, NULL),
  -- L18: live, collection alice->alice
  ('3JUuokbh7Y2YaXQVd9uy5', 'acme-support', 'alice', 'alice', 'explicit', 'I am relocating my whole team to Vancouver.', 'support-thread-1042', 1, '{"message_ids": [7, 7]}'::jsonb || jsonb_build_object('message_created_at', to_char((now() - interval '4332 minutes') AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS')), pg_temp.fake_embedding(24), now() - interval '4326 minutes', NULL, 'synced', now() - interval '4326 minutes', NULL, NULL),
  -- L05: live; replacement of T02
  ('8e-mzwA8NvKJqYbGUsloU', 'acme-support', 'agent', 'alice', 'explicit', 'Alice''s manager is Priya.', 'support-thread-1042', 1, '{"message_ids": [9, 10]}'::jsonb || jsonb_build_object('message_created_at', to_char((now() - interval '4328 minutes') AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS')), pg_temp.fake_embedding(25), now() - interval '4325 minutes', NULL, 'synced', now() - interval '4325 minutes', NULL, NULL),
  -- L15: live; replacement of T12
  ('B-7PVala2gSedCD2lWieX', 'acme-support', 'agent', 'alice', 'explicit', 'Alice''s billing city is Vancouver.', 'support-thread-1042', 1, '{"message_ids": [7, 8]}'::jsonb || jsonb_build_object('message_created_at', to_char((now() - interval '4331 minutes') AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS')), pg_temp.fake_embedding(26), now() - interval '4323 minutes', NULL, 'synced', now() - interval '4323 minutes', NULL, NULL),
  -- L10: live; replacement of T08
  ('Rl9Hr3RCy6SZW7Sdyzwyk', 'acme-support', 'agent', 'alice', 'explicit', 'Alice leads the support team in the Vancouver office.', 'support-thread-1042', 1, '{"message_ids": [7, 8]}'::jsonb || jsonb_build_object('message_created_at', to_char((now() - interval '4331 minutes') AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS')), pg_temp.fake_embedding(27), now() - interval '4322 minutes', NULL, 'synced', now() - interval '4322 minutes', NULL, NULL),
  -- L12: live; cites T09 among three sources
  ('BPuAcgNNr-8_vS8Yady9O', 'acme-support', 'agent', 'alice', 'inductive', 'Alice tends to move with her team; expect address changes after office moves.', NULL, 1, '{"message_ids": [1, 8], "source_ids": ["j71T5Jml83D-VC0KrxbME", "TKIPhfUZ5Y5iysHqNNUJq", "4r9MNSCSjnGj-fj_aTQPx"], "sources": ["Alice works at Acme Corp as a support lead.", "Alice''s shipping address is in Toronto.", "Alice prefers email over phone calls."], "pattern_type": "tendency", "confidence": "medium"}'::jsonb || jsonb_build_object('message_created_at', to_char((now() - interval '4331 minutes') AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS')), pg_temp.fake_embedding(28), now() - interval '4321 minutes', NULL, 'synced', now() - interval '4321 minutes', '["j71T5Jml83D-VC0KrxbME", "TKIPhfUZ5Y5iysHqNNUJq", "4r9MNSCSjnGj-fj_aTQPx"]'::jsonb, NULL),
  -- L08: live; replacement of T06
  ('LDCntANtGasBYuzGKFxBb', 'acme-support', 'agent', 'alice', 'explicit', 'Alice''s team is on the Pro plan.', 'support-thread-1042', 1, '{"message_ids": [7, 8]}'::jsonb || jsonb_build_object('message_created_at', to_char((now() - interval '4331 minutes') AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS')), pg_temp.fake_embedding(29), now() - interval '2920 minutes', NULL, 'synced', now() - interval '2920 minutes', NULL, NULL),
  -- L06: live; replacement of T03
  ('kbeMlnT_2hruF3tUNvrgh', 'acme-support', 'agent', 'alice', 'explicit', 'Alice''s order #88412 was delivered.', 'support-thread-1042', 1, '{"message_ids": [7, 8]}'::jsonb || jsonb_build_object('message_created_at', to_char((now() - interval '4331 minutes') AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS')), pg_temp.fake_embedding(30), now() - interval '2910 minutes', NULL, 'synced', now() - interval '2910 minutes', NULL, NULL),
  -- L09: live; replacement of T07
  ('y0IlMZUwFo_YAgUoWN1of', 'acme-support', 'agent', 'alice', 'deductive', 'Approval requests from Alice''s team go to Priya.', NULL, 1, '{"message_ids": [9, 10], "source_ids": ["8e-mzwA8NvKJqYbGUsloU", "j71T5Jml83D-VC0KrxbME"], "premises": ["Alice''s manager is Priya.", "Alice works at Acme Corp as a support lead."]}'::jsonb || jsonb_build_object('message_created_at', to_char((now() - interval '4328 minutes') AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS')), pg_temp.fake_embedding(31), now() - interval '2900 minutes', NULL, 'synced', now() - interval '2900 minutes', '["8e-mzwA8NvKJqYbGUsloU", "j71T5Jml83D-VC0KrxbME"]'::jsonb, NULL),
  -- L07: live; cites T04 (in edges_and_source_ids only through source_ids)
  ('OLCDSx_TxLfoR8VOaU-wN', 'acme-support', 'agent', 'alice', 'deductive', 'Alice will probably want a follow-up by email rather than a call.', NULL, 1, '{"message_ids": [1, 4], "source_ids": ["8gzJmukmicKmwMIHwMM4K", "4r9MNSCSjnGj-fj_aTQPx"], "premises": ["Alice''s phone number is 416-555-0142.", "Alice prefers email over phone calls."]}'::jsonb || jsonb_build_object('message_created_at', to_char((now() - interval '59042 minutes') AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS')), pg_temp.fake_embedding(32), now() - interval '2 days', NULL, 'synced', now() - interval '2 days', '["8gzJmukmicKmwMIHwMM4K", "4r9MNSCSjnGj-fj_aTQPx"]'::jsonb, NULL),
  -- L13: live; cites T12 (in edges_and_source_ids only through document_sources)
  ('wz_QKAjcZkelLH5sA3pWn', 'acme-support', 'agent', 'alice', 'contradiction', 'Alice''s stated city (Vancouver) conflicts with an older billing city (Toronto).', NULL, 1, '{"message_ids": [7, 8], "source_ids": ["mtuxZasDvKjtn8XMF4vR6", "jOvmfNrJMzSuY1NYX3AAg"], "sources": ["Alice''s billing city is Toronto.", "Alice lives in Vancouver."]}'::jsonb || jsonb_build_object('message_created_at', to_char((now() - interval '4331 minutes') AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS')), pg_temp.fake_embedding(33), now() - interval '1 days', NULL, 'synced', now() - interval '1 days', '["mtuxZasDvKjtn8XMF4vR6", "jOvmfNrJMzSuY1NYX3AAg"]'::jsonb, NULL),
  -- X04: live; cites X03
  ('7vDAIPWUGMiP_fSnHk-YH', 'home-assistant', 'agent', 'alice', 'deductive', 'Do not suggest dairy creamer to Alice.', NULL, 1, '{"message_ids": [15, 18], "source_ids": ["ShJZSKttZIBEoC8_Dk8Hq"], "premises": ["Alice takes cow''s milk in her coffee."]}'::jsonb || jsonb_build_object('message_created_at', to_char((now() - interval '7214 minutes') AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS')), pg_temp.fake_embedding(34), now() - interval '1 days', NULL, 'synced', now() - interval '1 days', '["ShJZSKttZIBEoC8_Dk8Hq"]'::jsonb, NULL),
  -- L16: live; replacement of T10
  ('Czx_ExauZ9m8d3xnmk85P', 'acme-support', 'agent', 'alice', 'explicit', 'Alice''s preferred contact window is 1-3pm Pacific.', 'support-thread-1042', 1, '{"message_ids": [11, 12]}'::jsonb || jsonb_build_object('message_created_at', to_char((now() - interval '3 minutes') AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS')), pg_temp.fake_embedding(35), now() - interval '2 minutes', NULL, 'pending', NULL, NULL, NULL),
  -- L17: live; cites T10
  ('K4Kf0719xDyaSQxyp2VOL', 'acme-support', 'agent', 'alice', 'deductive', 'Schedule Alice''s callbacks inside her contact window.', NULL, 1, '{"message_ids": [5, 6], "source_ids": ["sSvq1WazssPlr7jXtt6cd"], "premises": ["Alice''s preferred contact window is 9-11am Eastern."]}'::jsonb || jsonb_build_object('message_created_at', to_char((now() - interval '14401 minutes') AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS')), pg_temp.fake_embedding(36), now() - interval '2 minutes', NULL, 'synced', now() - interval '2 minutes', '["sSvq1WazssPlr7jXtt6cd"]'::jsonb, NULL);

COMMIT;
