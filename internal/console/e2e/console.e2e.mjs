// The review console in a real browser: Debian's chromium, headless, driven
// by playwright-core (which downloads no browser). Run by e2e_test.go
// against `supersessiond run` on a throwaway database; it prints one line
// per step and exits non-zero at the first failure.
//
//   BASE_URL=http://127.0.0.1:PORT TOKEN=... SHOTS=/tmp/shots node console.e2e.mjs
import { chromium } from 'playwright-core';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const base = process.env.BASE_URL;
const token = process.env.TOKEN;
const shots = process.env.SHOTS || mkdtempSync(join(tmpdir(), 'console-shots-'));
const chromiumPath = process.env.CHROMIUM || '/usr/bin/chromium';
if (!base || !token) {
  console.error('BASE_URL and TOKEN are required');
  process.exit(2);
}

const step = (name) => console.log('step: ' + name);
function check(cond, what) {
  if (!cond) throw new Error('check failed: ' + what);
}

// A fresh profile each run (the persistent-context form is how Playwright
// takes --user-data-dir).
const context = await chromium.launchPersistentContext(mkdtempSync(join(tmpdir(), 'console-chromium-')), {
  executablePath: chromiumPath,
  headless: true,
  // attacker.example resolves to this host, as a rebinding DNS server
  // would make it: a page of that name must read nothing.
  args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
    '--disable-background-networking', '--disable-component-update', '--disable-sync',
    '--host-resolver-rules=MAP attacker.example 127.0.0.1'],
  viewport: { width: 1360, height: 900 },
  deviceScaleFactor: 1,
});
const browser = context;
const page = await context.newPage();
page.setDefaultTimeout(20000);
const errors = [];
page.on('pageerror', (e) => errors.push(e.message));
page.on('console', (m) => { if (m.type() === 'error') errors.push(m.text()); });

const badge = (id) => page.locator(`tr[data-id="${id}"] .badge`).first();
const idsWithSignal = async (signal) =>
  page.locator('#queue tbody tr').evaluateAll((rows, s) =>
    rows.filter((r) => r.querySelector('.chip.' + s)).map((r) => r.dataset.id), signal);

try {
  step('the queue needs a token: the console opens on the login form');
  await page.goto(base + '/ui/');
  await page.waitForURL(/\/ui\/login\?next=/);
  await page.locator('h1', { hasText: 'Log in' }).waitFor();
  check(await page.locator('#queue').count() === 0, 'no queue before login');
  await page.screenshot({ path: join(shots, 'login.png'), fullPage: true });
  const listing = await page.request.get(base + '/ui/static/');
  check(listing.status() === 404 && !(await listing.text()).includes('console.js'), '/ui/static/ lists nothing: ' + listing.status());

  step('log in with the admin token and a name');
  await page.goto(base + '/ui/');
  await page.fill('#token', token);
  await page.fill('#name', 'e2e-operator');
  await page.click('button[type=submit]');
  await page.locator('#bulk').waitFor();
  check(await page.locator('body[data-admin="true"]').count() === 1, 'logged in');
  check((await page.locator('.modes .operator').textContent()).trim() === 'e2e-operator', 'the operator is shown');
  const pendingTab = page.locator('.tab.pending .n');
  const pendingBefore = parseInt(await pendingTab.textContent(), 10);
  check(pendingBefore > 5, 'several pending proposals, got ' + pendingBefore);
  await page.screenshot({ path: join(shots, 'queue.png'), fullPage: true });

  step('a page of another site rebound to this host reads nothing, logged in or not');
  const port = new URL(base).port;
  const rebound = await context.newPage();
  const api = await rebound.goto('http://attacker.example:' + port + '/api/proposals');
  const apiText = await rebound.locator('body').textContent();
  check(api.status() === 403 && !apiText.includes('"status"'), 'the API through a rebound name: ' + api.status());
  await rebound.goto('http://attacker.example:' + port + '/ui/');
  await rebound.waitForURL(/\/ui\/login/);
  check(await rebound.locator('#queue').count() === 0, 'no queue through a rebound name');
  await rebound.close();

  step('filter: pending only, one agent');
  await page.click('.tab.pending');
  await page.waitForURL(/status=pending/);
  await page.selectOption('#f-agent', 'assistant-sam');
  await page.click('.filters button[type=submit]');
  await page.waitForURL(/agent=assistant-sam/);
  const agents = await page.locator('#queue tbody td.agent').allTextContents();
  check(agents.length > 0 && agents.every((a) => a.trim() === 'assistant-sam'), 'only assistant-sam: ' + agents.join(','));
  const statuses = await page.locator('#queue tbody .badge:not(.protected)').allTextContents();
  check(statuses.every((s) => s.trim() === 'pending'), 'only pending: ' + statuses.join(','));

  step('open a proposal: old and new side by side, words that differ marked');
  const first = page.locator('#queue tbody tr').first();
  const openID = await first.getAttribute('data-id');
  await first.locator('.change a').click();
  await page.waitForURL(/\/ui\/proposals\//);
  await page.locator('.side.old del, .side.new ins').first().waitFor();
  check(await page.locator('.side.old').count() === 1 && await page.locator('.side.new').count() === 1, 'both sides');
  check(await page.locator('table.signals .chip').count() > 0, 'signals listed');
  check(await page.locator('.timeline li').count() > 0, 'history listed');
  await page.screenshot({ path: join(shots, 'proposal.png'), fullPage: true });

  step('accept it with the keyboard; the status changes once the grace period is over');
  await page.keyboard.press('a');
  await page.locator('#toast .undo').waitFor({ state: 'visible' });
  await page.locator('#status', { hasText: 'accepted' }).waitFor();

  step('undo right after an accept takes it back before it is sent');
  await page.click('.back');
  await page.waitForURL(/\/ui\/\?/);
  const second = page.locator('#queue tbody tr').first();
  const secondID = await second.getAttribute('data-id');
  check(secondID !== openID, 'the accepted one left the pending list');
  await second.hover();
  await page.keyboard.press('a');
  await page.locator('#toast .undo').waitFor({ state: 'visible' });
  await page.keyboard.press('z');
  await page.locator('#toast .msg', { hasText: 'Taken back' }).waitFor();
  check((await badge(secondID).textContent()).trim() === 'pending', 'still pending after undo');

  step('bulk-reject every proposal of a filter');
  await page.goto(base + '/ui/?status=pending&signal=value_conflict&agent=assistant-sam');
  const vc = await idsWithSignal('value_conflict');
  check(vc.length >= 2, 'value_conflict proposals to reject: ' + vc.length);
  await page.check('#bulk-all');
  await page.click('#bulk button[data-bulk=reject]');
  await page.locator('#toast .msg', { hasText: 'Rejecting' }).waitFor();
  await page.locator('#toast .msg', { hasText: 'Rejected ' + vc.length }).waitFor();
  await page.goto(base + '/ui/?status=rejected&agent=assistant-sam');
  for (const id of vc) check(await page.locator(`tr[data-id="${id}"]`).count() === 1, 'rejected: ' + id);

  step('apply one, then undo the supersession from the toast');
  await page.goto(base + '/ui/?status=pending');
  const row = page.locator('#queue tbody tr').first();
  const applyID = await row.getAttribute('data-id');
  await row.locator('button[data-act=apply]').click();
  await page.locator('#toast .msg', { hasText: 'Applied 1' }).waitFor();
  await page.locator('body[data-busy="0"]').waitFor({ state: 'attached' });
  await page.click('#toast .undo');
  await page.locator('#toast .msg', { hasText: 'Undid 1' }).waitFor();
  await page.goto(base + '/ui/proposals/' + applyID);
  await page.locator('#status', { hasText: 'undone' }).waitFor();
  check(await page.locator('.timeline .supersession_reverted').count() === 1, 'the revert is in the history');
  check((await page.locator('#applied .who').textContent()).trim() === 'e2e-operator (console)', 'who applied');
  check((await page.locator('#reverted .who').textContent()).trim() === 'e2e-operator (console)', 'who undid');
  await page.screenshot({ path: join(shots, 'proposal-undone.png'), fullPage: true });

  step('the accepted proposal says who accepted it');
  await page.goto(base + '/ui/proposals/' + openID);
  check((await page.locator('#reviewed .who').textContent()).trim() === 'e2e-operator (console)', 'who accepted');

  step('the queue shows the counts per status');
  await page.goto(base + '/ui/');
  const n = async (s) => parseInt(await page.locator('.tab.' + s + ' .n').textContent(), 10);
  check(await n('accepted') >= 1 && await n('rejected') >= vc.length && await n('undone') === 1, 'counts per status');
  check(await n('pending') === pendingBefore - 2 - vc.length, 'pending went down by what was decided');
  await page.screenshot({ path: join(shots, 'queue-after.png'), fullPage: true });

  step('stats: a table and a chart per signal');
  await page.goto(base + '/ui/stats');
  check(await page.locator('svg.bar').count() > 2, 'charts');
  check((await page.locator('.stat.prec .n').textContent()).trim() !== '-', 'a precision');
  await page.screenshot({ path: join(shots, 'stats.png'), fullPage: true });

  check(errors.length === 0, 'no script errors: ' + errors.join('; '));
  console.log('ok: accepted ' + openID + ', rejected ' + vc.join(',') + ', applied and undid ' + applyID + ', shots in ' + shots);
} catch (e) {
  try { console.error('toast at failure: ' + await page.locator('#toast').evaluate((t) => t.outerHTML)); await page.screenshot({ path: join(shots, 'failure.png'), fullPage: true }); } catch { /* no page */ }
  console.error('FAIL: ' + e.message + (errors.length ? '\nscript errors: ' + errors.join('; ') : ''));
  await browser.close();
  process.exit(1);
}
await browser.close();
