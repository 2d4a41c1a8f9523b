-- The demo agent database: three agents sharing one PostgreSQL, as an agent
-- stack with several assistants would. Times are fixed in 2026 so that the
-- output reads the same on every run; compaction and tombstone times are
-- relative to now() because staleness is.

-- ---------------------------------------------------------------- entities
INSERT INTO entities (id, agent_id, name, entity_type) VALUES
  ('sam',   'assistant-sam', 'Sam',   'person'),
  ('amari', 'assistant-sam', 'Amari', 'person'),
  ('kim',   'assistant-kim', 'Kim',   'person'),
  ('ops',   'ops-bot',       'Checkout service', 'system');

INSERT INTO entity_aspects (id, entity_id, agent_id, name, canonical_name) VALUES
  ('sam-home',      'sam',   'assistant-sam', 'Home',          'home'),
  ('sam-diet',      'sam',   'assistant-sam', 'Diet',          'diet'),
  ('sam-health',    'sam',   'assistant-sam', 'Health',        'health'),
  ('sam-tools',     'sam',   'assistant-sam', 'Tools',         'tools'),
  ('sam-work',      'sam',   'assistant-sam', 'Work',          'work'),
  ('sam-languages', 'sam',   'assistant-sam', 'Languages',     'languages'),
  ('sam-hobbies',   'sam',   'assistant-sam', 'Hobbies',       'hobbies'),
  ('sam-family',    'sam',   'assistant-sam', 'Family',        'family'),
  ('sam-prefs',     'sam',   'assistant-sam', 'Preferences',   'preferences'),
  ('sam-schedule',  'sam',   'assistant-sam', 'Schedule',      'schedule'),
  ('amari-rel',     'amari', 'assistant-sam', 'Relationship with Sam', 'relationship'),
  ('kim-home',      'kim',   'assistant-kim', 'Home',          'home'),
  ('kim-music',     'kim',   'assistant-kim', 'Music',         'music'),
  ('ops-config',    'ops',   'ops-bot',       'Configuration', 'configuration');

-- Source memories for a few attributes (memory_history rows point at them).
INSERT INTO memories (id, agent_id, content, created_at) VALUES
  ('mem-101', 'assistant-sam', 'Sam mentioned they live in Toronto, near Trinity Bellwoods.', '2026-01-10 09:00+00'),
  ('mem-102', 'assistant-sam', 'Sam said they use VS Code for everything.', '2026-03-02 09:00+00');

-- -------------------------------------------------------------- attributes
-- Sam, as the assistant learned them over the year. Contradictions:
--   home: Toronto → Vancouver           (value conflict)
--   diet: vegetarian → no longer        (negation)
--   tools: VS Code → Neovim             (value conflict + "switched")
--   work: reports to Dana → Priya       (value conflict + "now")
--   preferences: dark → light mode      (antonym + value conflict)
--   hobbies: half → full marathon       (temporal: "currently")
--   family: married → divorced          (antonym at 0.6: the review band)
--   health: allergic → no longer        (but the allergy is protected)
-- Compatible pairs that must survive: languages, hobbies, balcony garden.
INSERT INTO entity_attributes (id, aspect_id, agent_id, memory_id, kind, content, normalized_content, confidence, protected, created_at, updated_at) VALUES
  ('attr-home-1',   'sam-home',      'assistant-sam', 'mem-101', 'attribute',  'Lives in Toronto',                          'lives in toronto', 0.9, false, '2026-01-10 09:00+00', '2026-01-10 09:00+00'),
  ('attr-home-2',   'sam-home',      'assistant-sam', NULL,      'attribute',  'Has a balcony with tomato plants',          'has a balcony with tomato plants', 0.8, false, '2026-02-02 18:30+00', '2026-02-02 18:30+00'),
  ('attr-home-3',   'sam-home',      'assistant-sam', NULL,      'attribute',  'Lives in Vancouver',                        'lives in vancouver', 0.9, false, '2026-06-15 20:05+00', '2026-06-15 20:05+00'),
  ('attr-diet-1',   'sam-diet',      'assistant-sam', NULL,      'attribute',  'Is vegetarian',                             'is vegetarian', 0.9, false, '2026-01-12 12:00+00', '2026-01-12 12:00+00'),
  ('attr-diet-2',   'sam-diet',      'assistant-sam', NULL,      'attribute',  'Drinks oat milk lattes',                    'drinks oat milk lattes', 0.7, false, '2026-02-20 08:15+00', '2026-02-20 08:15+00'),
  ('attr-diet-3',   'sam-diet',      'assistant-sam', NULL,      'attribute',  'Is no longer vegetarian',                   'is no longer vegetarian', 0.9, false, '2026-07-04 19:40+00', '2026-07-04 19:40+00'),
  ('attr-health-1', 'sam-health',    'assistant-sam', NULL,      'attribute',  'Allergic to peanuts',                       'allergic to peanuts', 1.0, true,  '2026-01-05 10:00+00', '2026-01-05 10:00+00'),
  ('attr-health-2', 'sam-health',    'assistant-sam', NULL,      'constraint', 'Never suggest recipes containing peanuts',  'never suggest recipes containing peanuts', 1.0, false, '2026-01-05 10:01+00', '2026-01-05 10:01+00'),
  ('attr-health-3', 'sam-health',    'assistant-sam', NULL,      'attribute',  'No longer allergic to peanuts',             'no longer allergic to peanuts', 0.6, false, '2026-09-09 14:00+00', '2026-09-09 14:00+00'),
  ('attr-tools-1',  'sam-tools',     'assistant-sam', 'mem-102', 'attribute',  'Uses VS Code as the main editor',           'uses vs code as the main editor', 0.9, false, '2026-03-02 09:00+00', '2026-03-02 09:00+00'),
  ('attr-tools-2',  'sam-tools',     'assistant-sam', NULL,      'attribute',  'Switched to Neovim as the main editor',     'switched to neovim as the main editor', 0.9, false, '2026-10-01 11:20+00', '2026-10-01 11:20+00'),
  ('attr-work-1',   'sam-work',      'assistant-sam', NULL,      'attribute',  'Reports to Dana',                           'reports to dana', 0.9, false, '2026-02-01 09:00+00', '2026-02-01 09:00+00'),
  ('attr-work-2',   'sam-work',      'assistant-sam', NULL,      'attribute',  'Works on the payments team',                'works on the payments team', 0.8, false, '2026-02-01 09:05+00', '2026-02-01 09:05+00'),
  ('attr-work-3',   'sam-work',      'assistant-sam', NULL,      'attribute',  'Now reports to Priya',                      'now reports to priya', 0.9, false, '2026-09-14 16:00+00', '2026-09-14 16:00+00'),
  ('attr-lang-1',   'sam-languages', 'assistant-sam', NULL,      'attribute',  'Speaks French',                             'speaks french', 0.9, false, '2026-01-20 10:00+00', '2026-01-20 10:00+00'),
  ('attr-lang-2',   'sam-languages', 'assistant-sam', NULL,      'attribute',  'Speaks Japanese',                           'speaks japanese', 0.8, false, '2026-05-11 10:00+00', '2026-05-11 10:00+00'),
  ('attr-hob-1',    'sam-hobbies',   'assistant-sam', NULL,      'attribute',  'Plays tennis on Saturdays',                 'plays tennis on saturdays', 0.8, false, '2026-01-25 10:00+00', '2026-01-25 10:00+00'),
  ('attr-hob-2',    'sam-hobbies',   'assistant-sam', NULL,      'attribute',  'Training for a half marathon',              'training for a half marathon', 0.8, false, '2026-03-15 07:00+00', '2026-03-15 07:00+00'),
  ('attr-hob-3',    'sam-hobbies',   'assistant-sam', NULL,      'attribute',  'Plays the piano',                           'plays the piano', 0.8, false, '2026-04-02 21:00+00', '2026-04-02 21:00+00'),
  ('attr-hob-4',    'sam-hobbies',   'assistant-sam', NULL,      'attribute',  'Currently training for a full marathon',    'currently training for a full marathon', 0.8, false, '2026-08-20 07:00+00', '2026-08-20 07:00+00'),
  ('attr-fam-1',    'sam-family',    'assistant-sam', NULL,      'attribute',  'Is married to Alex',                        'is married to alex', 0.9, false, '2026-01-03 10:00+00', '2026-01-03 10:00+00'),
  ('attr-fam-2',    'sam-family',    'assistant-sam', NULL,      'attribute',  'Is divorced',                               'is divorced', 0.7, false, '2026-10-20 10:00+00', '2026-10-20 10:00+00'),
  ('attr-prefs-1',  'sam-prefs',     'assistant-sam', NULL,      'attribute',  'Prefers dark mode in every app',            'prefers dark mode in every app', 0.9, false, '2026-02-10 10:00+00', '2026-02-10 10:00+00'),
  ('attr-prefs-2',  'sam-prefs',     'assistant-sam', NULL,      'attribute',  'Prefers light mode in every app',           'prefers light mode in every app', 0.9, false, '2026-08-01 10:00+00', '2026-08-01 10:00+00'),
  ('attr-sched-1',  'sam-schedule',  'assistant-sam', NULL,      'constraint', 'Never book meetings before 9am',            'never book meetings before 9am', 1.0, false, '2026-01-08 10:00+00', '2026-01-08 10:00+00'),
  ('attr-sched-2',  'sam-schedule',  'assistant-sam', NULL,      'attribute',  'Takes 8am calls with the Tokyo team',       'takes 8am calls with the tokyo team', 0.7, false, '2026-06-01 10:00+00', '2026-06-01 10:00+00'),
  -- Signet's example: no keyword gives this away; it is the LLM fallback's job.
  ('attr-amari-1',  'amari-rel',     'assistant-sam', NULL,      'attribute',  'Apartment hunting with Sam',                'apartment hunting with sam', 0.8, false, '2026-03-20 10:00+00', '2026-03-20 10:00+00'),
  ('attr-amari-2',  'amari-rel',     'assistant-sam', NULL,      'attribute',  'Broke up with Sam',                         'broke up with sam', 0.9, false, '2026-05-02 10:00+00', '2026-05-02 10:00+00'),
  -- Kim's assistant: its own contradiction, and a row that points at Sam's
  -- aspect. Agents are never mixed: Kim's rows never decide about Sam's.
  ('attr-kim-1',    'kim-home',      'assistant-kim', NULL,      'attribute',  'Lives in Vancouver',                        'lives in vancouver', 0.9, false, '2026-01-15 10:00+00', '2026-01-15 10:00+00'),
  ('attr-kim-2',    'kim-home',      'assistant-kim', NULL,      'attribute',  'Lives in Toronto',                          'lives in toronto', 0.9, false, '2026-04-15 10:00+00', '2026-04-15 10:00+00'),
  ('attr-kim-3',    'sam-home',      'assistant-kim', NULL,      'attribute',  'Lives in Berlin',                           'lives in berlin', 0.5, false, '2026-11-01 10:00+00', '2026-11-01 10:00+00'),
  ('attr-kim-4',    'kim-music',     'assistant-kim', NULL,      'attribute',  'Favourite band is Radiohead',               'favourite band is radiohead', 0.8, false, '2026-02-01 10:00+00', '2026-02-01 10:00+00'),
  ('attr-kim-5',    'kim-music',     'assistant-kim', NULL,      'attribute',  'Favourite band is Phoebe Bridgers',         'favourite band is phoebe bridgers', 0.8, false, '2026-09-01 10:00+00', '2026-09-01 10:00+00'),
  -- ops-bot remembers facts about a service.
  ('attr-ops-1',    'ops-config',    'ops-bot',       NULL,      'attribute',  'Timezone is America/Toronto',               'timezone is america/toronto', 0.9, false, '2026-02-01 10:00+00', '2026-02-01 10:00+00'),
  ('attr-ops-2',    'ops-config',    'ops-bot',       NULL,      'attribute',  'Retries failed payments three times',       'retries failed payments three times', 0.9, false, '2026-02-01 10:01+00', '2026-02-01 10:01+00');

-- Not classified yet: the agent's classifier will give this one an aspect
-- while the daemon runs, and the inline hook will decide it.
INSERT INTO entity_attributes (id, aspect_id, agent_id, kind, content, normalized_content, confidence, created_at, updated_at) VALUES
  ('attr-home-4', NULL, 'assistant-sam', 'attribute', 'Lives in Lisbon', 'lives in lisbon', 0.9, '2026-11-20 10:00+00', '2026-11-20 10:00+00');

-- ------------------------------------------------------------ compaction
-- Sam's assistant trimmed messages 101-106 from its context and queued a
-- compaction 45 minutes ago that never landed (the LLM call failed): the
-- range is in no summary and no memory. Another event points at messages
-- the agent has since purged; a third was queued two minutes ago and may
-- still be in flight.
INSERT INTO messages (agent_id, seq, direction, body, created_at) VALUES
  ('assistant-sam', 101, 'inbound',  'We finally adopted a cat! Her name is Miso', now() - interval '50 minutes'),
  ('assistant-sam', 102, 'outbound', 'Congratulations! How old is Miso?', now() - interval '50 minutes'),
  ('assistant-sam', 103, 'inbound',  E'She is two years old and hates the vacuum cleaner\nwe got her from the Mount Pleasant shelter', now() - interval '49 minutes'),
  ('assistant-sam', 104, 'outbound', 'Noted. I will suggest quiet cleaning times.', now() - interval '49 minutes'),
  ('assistant-sam', 105, 'inbound',  'Also I start the new job at Figma on March 3', now() - interval '48 minutes'),
  ('assistant-sam', 106, 'outbound', 'Exciting! Want me to block your calendar for onboarding?', now() - interval '48 minutes'),
  ('assistant-sam', 107, 'inbound',  'Yes please, the whole first week', now() - interval '3 minutes'),
  ('assistant-sam', 108, 'outbound', 'Done.', now() - interval '3 minutes'),
  ('assistant-kim', 12,  'inbound',  'Remind me to renew my passport in May', now() - interval '2 hours');

INSERT INTO compaction_events (agent_id, triggered_at, min_message_seq, max_message_seq, status, retry_count) VALUES
  ('assistant-sam', now() - interval '45 minutes', 101, 106, 'pending', 0),
  ('assistant-kim', now() - interval '90 minutes', 300, 320, 'pending', 1),
  ('assistant-sam', now() - interval '2 minutes',  107, 108, 'pending', 0),
  ('assistant-sam', now() - interval '3 days',     1,   100, 'completed', 0);

-- ------------------------------------------------------------- documents
-- Honcho-style observations. The dreamer replaced "Sam lives in Toronto"
-- with "Sam lives in Vancouver" and soft-deleted the old one, but a deduction
-- still cites it: that tombstone must be kept (without its embedding). The
-- old job observation is cited only from another workspace, which does not
-- count; a plain duplicate was soft-deleted; one deletion is too recent to
-- touch; and one kept tombstone's last dependent was deleted since.
INSERT INTO documents (id, workspace_name, observer, observed, content, level, source_ids, embedding, deleted_at, superseded_by, created_at) VALUES
  ('obs-city-1',  'sam-assistant', 'assistant', 'sam', 'Sam lives in Toronto',                       'explicit',  NULL,                 '{0.12,0.80,0.33}', now() - interval '2 hours',  'obs-city-2', now() - interval '300 days'),
  ('obs-city-2',  'sam-assistant', 'assistant', 'sam', 'Sam lives in Vancouver',                     'explicit',  NULL,                 '{0.11,0.79,0.35}', NULL,                        NULL,         now() - interval '150 days'),
  ('ded-ferry',   'sam-assistant', 'assistant', 'sam', 'Sam probably commutes by streetcar',         'deductive', '["obs-city-1"]',     '{0.40,0.10,0.52}', NULL,                        NULL,         now() - interval '290 days'),
  ('obs-job-1',   'sam-assistant', 'assistant', 'sam', 'Sam works on the payments team at Shopify',  'explicit',  NULL,                 '{0.70,0.22,0.05}', now() - interval '3 hours',  'obs-job-2',  now() - interval '250 days'),
  ('obs-job-2',   'sam-assistant', 'assistant', 'sam', 'Sam works at Figma',                         'explicit',  NULL,                 '{0.71,0.20,0.06}', NULL,                        NULL,         now() - interval '20 days'),
  ('kim-note',    'kim-assistant', 'assistant', 'kim', 'Kim once worked with Sam on payments',       'deductive', '["obs-job-1"]',      '{0.31,0.31,0.31}', NULL,                        NULL,         now() - interval '100 days'),
  ('obs-tea-dup', 'sam-assistant', 'assistant', 'sam', 'Sam likes oolong tea',                       'explicit',  NULL,                 '{0.05,0.90,0.44}', now() - interval '1 hour',   NULL,         now() - interval '60 days'),
  ('obs-fresh',   'sam-assistant', 'assistant', 'sam', 'Sam is planning a trip to Lisbon',           'explicit',  NULL,                 '{0.50,0.50,0.50}', now() - interval '1 minute', 'obs-city-2', now() - interval '5 days'),
  ('obs-old-gym', 'sam-assistant', 'assistant', 'sam', 'Sam goes to the gym on Mondays',             'explicit',  NULL,                 NULL,               now() - interval '9 days',   'obs-gym-2',  now() - interval '200 days'),
  ('obs-gym-2',   'sam-assistant', 'assistant', 'sam', 'Sam goes to the gym on Thursdays',           'explicit',  NULL,                 '{0.60,0.61,0.62}', NULL,                        NULL,         now() - interval '9 days'),
  ('ded-gym',     'sam-assistant', 'assistant', 'sam', 'Sam keeps Monday evenings free',             'deductive', '["obs-old-gym"]',    '{0.20,0.21,0.22}', now() - interval '30 minutes', NULL,       now() - interval '190 days');
-- obs-old-gym was kept as a tombstone on an earlier pass, while ded-gym
-- still cited it; ded-gym has been deleted since.
UPDATE documents SET tombstone_preserved_at = now() - interval '8 days' WHERE id = 'obs-old-gym';

-- The rows above went through the classification trigger (they were
-- inserted with their aspect). In a real installation the daemon is added
-- to an existing database, so the sweep is what finds these: empty the
-- outbox to start from that situation.
DELETE FROM supersessiond.classified;
