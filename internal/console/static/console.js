// supersessiond review console: keyboard shortcuts, decisions through the
// JSON API, and an undo right after each action. The pages work without
// this script (their forms post to /ui/act); it only makes them quicker.
//
// Accept and reject are held back for a grace period before they are sent,
// so that Undo can take them back without a trace: a review, once written,
// is part of the audit trail for good. Apply is sent at once; its Undo is a
// real `undo` of the supersession, recorded in history.
(function () {
  'use strict';
  const body = document.body;
  const csrf = body.dataset.csrf || '';
  const admin = body.dataset.admin === 'true';
  const grace = parseInt(body.dataset.graceMs || '5000', 10);
  const toast = document.getElementById('toast');
  const help = document.getElementById('help');
  let cur = -1;          // the queue row the keys act on
  let last = null;       // what z undoes: {cancel} for a held review, {undo} for an apply
  let held = null;       // a review waiting for its grace period to end

  // ---- the API ----
  async function post(path, payload) {
    body.dataset.busy = '1';
    const res = await fetch(path, {
      method: 'POST', credentials: 'same-origin',
      headers: {'Content-Type': 'application/json', 'Accept': 'application/json', 'X-CSRF-Token': csrf},
      body: JSON.stringify(payload),
      keepalive: true,
    });
    let data = {};
    try { data = await res.json(); } catch (e) { /* not JSON */ }
    if (!res.ok) throw new Error(data.error || ('HTTP ' + res.status));
    return data;
  }

  // filterNow is the queue's filter as the API takes it.
  function filterNow() {
    const q = new URLSearchParams(location.search);
    const f = {agent: q.get('agent') || '', status: q.get('status') || '', signal: q.get('signal') || ''};
    if (q.get('min')) f.min_confidence = parseFloat(q.get('min'));
    if (q.get('max')) f.max_confidence = parseFloat(q.get('max'));
    return f;
  }

  // ---- toast ----
  let toastTimer = null;
  function say(msg, opts) {
    opts = opts || {};
    clearInterval(toastTimer);
    toast.hidden = false;
    toast.classList.toggle('err', !!opts.error);
    toast.querySelector('.msg').textContent = msg;
    const undo = toast.querySelector('.undo');
    undo.hidden = !opts.undo;
    const count = toast.querySelector('.count');
    count.textContent = '';
    let left = opts.seconds || 0;
    if (left > 0) {
      count.textContent = left + 's';
      toastTimer = setInterval(() => {
        left -= 1;
        count.textContent = left > 0 ? left + 's' : '';
        if (left <= 0) clearInterval(toastTimer);
      }, 1000);
    }
    if (!opts.sticky) {
      clearTimeout(say.hide);
      say.hide = setTimeout(() => { toast.hidden = true; }, opts.error ? 9000 : Math.max(6000, (opts.seconds || 0) * 1000 + 1500));
    }
  }
  toast.querySelector('.undo').addEventListener('click', () => undoLast());

  function describe(res) {
    const refused = (res.results || []).filter(r => r.error);
    let msg = verbPast(res.action) + ' ' + res.done + ' proposal' + (res.done === 1 ? '' : 's');
    if (refused.length) msg += '; ' + refused.length + ' refused: ' + refused[0].error;
    return {msg, error: refused.length > 0 && res.done === 0};
  }
  function verbPast(a) { return {accept: 'Accepted', reject: 'Rejected', apply: 'Applied', undo: 'Undid'}[a] || a; }
  function verbIng(a) { return {accept: 'Accepting', reject: 'Rejecting'}[a] || a; }

  // ---- what an action is aimed at ----
  function rows() { return Array.from(document.querySelectorAll('#queue tbody tr')); }
  function selectedIDs() {
    return Array.from(document.querySelectorAll('#queue input[name=id]:checked')).map(c => c.value);
  }
  // target: the selection, else the current row, else the proposal on its page.
  function target() {
    const sel = selectedIDs();
    if (sel.length) return {ids: sel};
    const r = rows()[cur];
    if (r) return {ids: [r.dataset.id]};
    const p = document.getElementById('proposal');
    if (p) return {ids: [p.dataset.id]};
    return null;
  }
  function markBusy(ids, label) {
    ids.forEach(id => {
      const el = document.querySelector('[data-id="' + CSS.escape(id) + '"]');
      if (!el) return;
      el.classList.toggle('busy', !!label);
      const badge = el.querySelector('.badge');
      if (!badge) return;
      if (label) { badge.dataset.was = badge.textContent; badge.textContent = label; }
      else if (badge.dataset.was) badge.textContent = badge.dataset.was;
    });
  }

  // ---- decisions ----
  function note() { const n = document.getElementById('note'); return n ? n.value : ''; }

  // review holds an accept or reject for the grace period, then sends it.
  function review(action, t) {
    if (!admin) return needLogin();
    flushHeld();
    const payload = t.all ? {action, all: true, filter: filterNow(), note: note()} : {action, ids: t.ids, note: note()};
    const n = t.all ? t.count : t.ids.length;
    const ids = t.all ? rows().filter(r => r.dataset.status === 'pending').map(r => r.dataset.id) : t.ids;
    markBusy(ids, verbIng(action).toLowerCase() + '…');
    const h = {payload, ids, timer: null};
    h.send = async () => {
      if (held === h) held = null;
      clearTimeout(h.timer);
      last = null;
      try {
        const res = await post('/api/bulk', payload);
        const d = describe(res);
        say(d.msg, {error: d.error});
      } catch (e) {
        say(e.message, {error: true});
      }
      await refresh();
    };
    h.timer = setTimeout(h.send, grace);
    held = h;
    last = {cancel: () => {
      clearTimeout(h.timer);
      if (held === h) held = null;
      markBusy(ids, null);
      say('Taken back: nothing was recorded.');
    }};
    say(verbIng(action) + ' ' + n + ' proposal' + (n === 1 ? '' : 's') + '…', {undo: true, seconds: Math.round(grace / 1000), sticky: true});
  }

  // flushHeld sends a held review now (leaving the page, or another action).
  function flushHeld() { if (held) { const h = held; held = null; h.send(); } }
  window.addEventListener('pagehide', flushHeld);

  async function apply(t) {
    if (!admin) return needLogin();
    flushHeld();
    const payload = t.all ? {action: 'apply', all: true, filter: filterNow()} : {action: 'apply', ids: t.ids};
    markBusy(t.ids || [], 'applying…');
    try {
      const res = await post('/api/bulk', payload);
      const done = (res.results || []).filter(r => !r.error).map(r => r.proposal_id);
      const d = describe(res);
      last = done.length ? {undo: () => undoProposals(done)} : null;
      say(d.msg, {error: d.error, undo: done.length > 0});
    } catch (e) {
      say(e.message, {error: true});
    }
    await refresh();
  }

  async function undoProposals(ids, all) {
    if (!admin) return needLogin();
    flushHeld();
    last = null;
    try {
      const res = await post('/api/bulk', all ? {action: 'undo', all: true, filter: filterNow()} : {action: 'undo', ids});
      const d = describe(res);
      say(d.msg, {error: d.error});
    } catch (e) {
      say(e.message, {error: true});
    }
    await refresh();
  }

  function undoLast() {
    if (!last) return say('Nothing to undo.');
    const l = last;
    last = null;
    if (l.cancel) l.cancel(); else if (l.undo) l.undo();
  }

  function needLogin() {
    say('Deciding needs a token: log in first.', {error: true});
  }

  function act(action, t) {
    if (!t) return;
    if (action === 'accept' || action === 'reject') return review(action, t);
    if (action === 'apply') return apply(t);
    if (action === 'undo') return undoProposals(t.ids, t.all);
  }

  // ---- refresh in place ----
  async function refresh() {
    const keep = rows()[cur] ? rows()[cur].dataset.id : null;
    const res = await fetch(location.href, {credentials: 'same-origin', headers: {'Accept': 'text/html'}});
    body.dataset.busy = '0'; // the page now shows what the action did (tests wait for this)
    if (!res.ok) return;
    const doc = new DOMParser().parseFromString(await res.text(), 'text/html');
    const main = doc.getElementById('main');
    if (!main) return;
    document.getElementById('main').replaceWith(document.adoptNode(main));
    bind();
    const rs = rows();
    cur = keep ? rs.findIndex(r => r.dataset.id === keep) : -1;
    if (cur < 0 && rs.length) cur = 0;
    focusRow();
  }

  // ---- keys and clicks ----
  function focusRow() {
    rows().forEach((r, i) => r.classList.toggle('cur', i === cur));
    const r = rows()[cur];
    if (r) r.scrollIntoView({block: 'nearest'});
  }
  function updateSelCount() {
    const el = document.getElementById('sel-count');
    if (el) el.textContent = selectedIDs().length;
  }

  function bind() {
    rows().forEach((r, i) => {
      r.addEventListener('click', e => {
        if (e.target.closest('input,button,a')) return;
        location.href = r.dataset.href;
      });
      r.addEventListener('mouseenter', () => { cur = i; focusRow(); });
    });
    document.querySelectorAll('#queue input[name=id]').forEach(c => c.addEventListener('change', updateSelCount));
    document.querySelectorAll('[data-act]').forEach(b => b.addEventListener('click', e => {
      e.preventDefault();
      const row = b.closest('[data-id]');
      act(b.dataset.act, {ids: [row ? row.dataset.id : b.form.querySelector('[name=id]').value]});
    }));
    document.querySelectorAll('[data-bulk]').forEach(b => b.addEventListener('click', e => {
      e.preventDefault();
      const all = document.getElementById('bulk-all');
      const matching = parseInt((b.form.querySelector('.scope strong') || {}).textContent || '0', 10);
      if (all && all.checked) return act(b.dataset.bulk, {all: true, count: matching});
      const ids = selectedIDs();
      if (!ids.length) return say('Select proposals first (x, or the boxes), or tick “all matching”.', {error: true});
      act(b.dataset.bulk, {ids});
    }));
    updateSelCount();
  }

  let pendingG = false;
  document.addEventListener('keydown', e => {
    if (e.ctrlKey || e.metaKey || e.altKey) return;
    const tag = (e.target.tagName || '').toLowerCase();
    if (tag === 'input' || tag === 'select' || tag === 'textarea') {
      if (e.key === 'Escape') e.target.blur();
      return;
    }
    const rs = rows();
    const k = e.key;
    if (pendingG) {
      pendingG = false;
      if (k === 's') { location.href = '/ui/stats'; return; }
      if (k === 'q') { location.href = '/ui/'; return; }
    }
    switch (k) {
      case 'j': if (rs.length) { cur = Math.min(cur + 1, rs.length - 1); focusRow(); } break;
      case 'k': if (rs.length) { cur = Math.max(cur - 1, 0); focusRow(); } break;
      case 'Enter': case 'o': if (rs[cur]) location.href = rs[cur].dataset.href; break;
      case 'x': if (rs[cur]) { const c = rs[cur].querySelector('input[name=id]'); if (c) { c.checked = !c.checked; updateSelCount(); } } break;
      case 'a': act('accept', target()); break;
      case 'r': act('reject', target()); break;
      case 'p': act('apply', target()); break;
      case 'u': act('undo', target()); break;
      case 'z': undoLast(); break;
      case '/': { const f = document.getElementById('f-agent') || document.querySelector('.filters select, .filters input'); if (f) { e.preventDefault(); f.focus(); } break; }
      case 'g': pendingG = true; break;
      case '?': help.hidden = !help.hidden; break;
      case 'Escape':
        if (!help.hidden) { help.hidden = true; break; }
        { const back = document.querySelector('a.back'); if (back) location.href = back.href; }
        break;
      default: return;
    }
  });

  bind();
  if (rows().length) { cur = 0; focusRow(); }
})();
