-- Shared by the four Honcho shapes (honcho_*.sql INCLUDE it); see NOTES.md.
INSERT INTO honcho.workspaces (id, name, created_at, metadata) VALUES
  ('m2MU60MDDOTMUOMlcA41j', 'acme-support', now() - interval '90 days', '{"plan": "pro"}'::jsonb),
  ('n6zRJmSbMAT_-MDZMgqxg', 'home-assistant', now() - interval '90 days', '{}'::jsonb);

INSERT INTO honcho.peers (id, name, workspace_name, created_at, configuration) VALUES
  ('UEPh-wuczxmuHhPDI2PVN', 'agent', 'acme-support', now() - interval '90 days', '{"observe_me": false}'::jsonb),
  ('DTCy4FtlbmQrWEMd09Y3a', 'alice', 'acme-support', now() - interval '90 days', '{"observe_me": true}'::jsonb),
  ('DI9s2driW5cM1uprpkd3l', 'bob', 'acme-support', now() - interval '90 days', '{"observe_me": true}'::jsonb),
  ('FSURj5AIztEwtr6mTZBue', 'agent', 'home-assistant', now() - interval '90 days', '{"observe_me": false}'::jsonb),
  ('ZWlUFThs0Bqz-_yVVDMRm', 'alice', 'home-assistant', now() - interval '90 days', '{"observe_me": true}'::jsonb);

INSERT INTO honcho.sessions (id, name, workspace_name, created_at) VALUES
  ('L5xo5VzeC2wway5Qd01o0', 'support-thread-1042', 'acme-support', now() - interval '60 days'),
  ('J6h6tLEVuftOL3lM1o0gR', 'support-thread-1043', 'acme-support', now() - interval '60 days'),
  ('VHl3oSd5nOSUPLYQmLrKA', 'kitchen-chat', 'home-assistant', now() - interval '7 days');

INSERT INTO honcho.session_peers (workspace_name, session_name, peer_name) VALUES
  ('acme-support', 'support-thread-1042', 'alice'),
  ('acme-support', 'support-thread-1042', 'agent'),
  ('acme-support', 'support-thread-1043', 'bob'),
  ('acme-support', 'support-thread-1043', 'agent'),
  ('home-assistant', 'kitchen-chat', 'alice'),
  ('home-assistant', 'kitchen-chat', 'agent');

-- Honcho's own messages (identity ids 1..18 in this order)
INSERT INTO honcho.messages (public_id, content, peer_name, workspace_name, session_name, token_count, seq_in_session, created_at) VALUES
  ('JKHpA7BWD6tqqjirX_4tn', 'Hi, I''m Alice, support lead at Acme Corp in our Toronto office; ship everything there. Email is best for me, and bill us to the Toronto address.', 'alice', 'acme-support', 'support-thread-1042', 30, 1, now() - interval '64806 minutes'),
  ('CtnRtaCFFs3sY8vOSKI1G', 'Welcome Alice, noted: email, Toronto office.', 'agent', 'acme-support', 'support-thread-1042', 9, 2, now() - interval '64805 minutes'),
  ('azC7xWMV2OFs23wPCui0A', 'My manager is Sam, approvals go to him. Phone is 416-555-0142. We are on the Basic plan and invoice template v1. Also I have a dentist appointment on Friday.', 'alice', 'acme-support', 'support-thread-1042', 32, 3, now() - interval '59043 minutes'),
  ('WgNxVXVxKgsZ4dVb7TxEc', 'Thanks, all noted.', 'agent', 'acme-support', 'support-thread-1042', 6, 4, now() - interval '59042 minutes'),
  ('0BTc3UvAVmfNqCAfr0bEk', 'Where is order #88412? Call me 9-11am Eastern. And what is your refund policy?', 'alice', 'acme-support', 'support-thread-1042', 17, 5, now() - interval '14402 minutes'),
  ('wogkZDwUelnur00QoUp8C', 'It is in transit; refunds are accepted within 30 days.', 'agent', 'acme-support', 'support-thread-1042', 13, 6, now() - interval '14401 minutes'),
  ('by2rFza8Mqh13FOtlzWL_', 'I moved to Vancouver with my team, so shipping and billing go there now. #88412 arrived, and we upgraded to the Pro plan.', 'alice', 'acme-support', 'support-thread-1042', 26, 7, now() - interval '4332 minutes'),
  ('0ruPKdY1OUbBs5T2-ST8N', 'Done, shipping and billing now point to Vancouver.', 'agent', 'acme-support', 'support-thread-1042', 11, 8, now() - interval '4331 minutes'),
  ('SB7iCMqZPjKyNjBjvj9BE', 'Also my new manager is Priya, approvals go to her now.', 'alice', 'acme-support', 'support-thread-1042', 14, 9, now() - interval '4329 minutes'),
  ('Av-TN_3FDSmJHusOvIf8f', 'Got it, approvals will be routed to Priya.', 'agent', 'acme-support', 'support-thread-1042', 11, 10, now() - interval '4328 minutes'),
  ('SeH_MME7ua_nLeiCMRJEs', 'Please call me 1-3pm Pacific from now on.', 'alice', 'acme-support', 'support-thread-1042', 11, 11, now() - interval '4 minutes'),
  ('9Na888lr3uV0rPU-NNCJA', 'Updated your contact window.', 'agent', 'acme-support', 'support-thread-1042', 7, 12, now() - interval '3 minutes'),
  ('nzmeCAFmjvTrNX1bsomK6', 'Alice is my team lead now; she used to be in the Toronto office.', 'bob', 'acme-support', 'support-thread-1043', 17, 1, now() - interval '4345 minutes'),
  ('ort7RmzC2XPpY8uC6Yvdy', 'Thanks Bob, noted.', 'agent', 'acme-support', 'support-thread-1043', 6, 2, now() - interval '4344 minutes'),
  ('6i5P902ZBQXxHeNDS2YL0', 'I take cow''s milk in my coffee; put eggs on my list.', 'alice', 'home-assistant', 'kitchen-chat', 15, 1, now() - interval '8645 minutes'),
  ('AEoVXsRkBt0wzHaXBnnf1', 'Added eggs to your shopping list.', 'agent', 'home-assistant', 'kitchen-chat', 9, 2, now() - interval '8644 minutes'),
  ('kDuBAOqiGhGeipyqLVOwE', 'Turns out I''m lactose intolerant; remind me to buy oat milk.', 'alice', 'home-assistant', 'kitchen-chat', 14, 3, now() - interval '7215 minutes'),
  ('InhI_sLt5tdPNzzpem9Zt', 'Added oat milk to your shopping list.', 'agent', 'home-assistant', 'kitchen-chat', 10, 4, now() - interval '7214 minutes');

INSERT INTO honcho.collections (id, workspace_name, observer, observed, created_at) VALUES
  ('JW5pAEgKXC2iXC3NfR4KS', 'acme-support', 'agent', 'alice', now() - interval '60 days'),
  ('0WV__KS_BYGsnayLAo5N6', 'acme-support', 'alice', 'alice', now() - interval '60 days'),
  ('FAaYqaaLpfStg6aqGE8eJ', 'acme-support', 'agent', 'bob', now() - interval '60 days'),
  ('Ej7oY9HM-ShKBAm6KhXhf', 'home-assistant', 'agent', 'alice', now() - interval '60 days');

