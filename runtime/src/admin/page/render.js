// fusebox operator page, part 1 of 2: what the page derives from the polled figures and how it
// draws them. Every value from the service goes into the DOM through textContent, never as HTML.
// mod.rs wraps both parts in one strict-mode block, so nothing here becomes a global.

const HISTORY_MS = 5 * 60 * 1000;
const OPEN_GROUP_MAX = 20;
const LABELS = {
  closed: 'closed', open: 'open', half_open: 'half-open',
  forced_open: 'forced open', forced_closed: 'forced closed',
};
const VERBS = {
  open: ['Force open', 'Every call gets the rejection (its fallback) at once, until closed or reset.'],
  close: ['Force close', 'Every call goes through and nothing trips it, until opened or reset; calls are still recorded into the window (POST …?record=false records nothing).'],
  reset: ['Reset', 'Back to closed with an empty window; the breaker judges again from scratch.'],
};
const COLS = 11;

const $ = (id) => document.getElementById(id);
const el = (tag, cls, text) => {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined) e.textContent = text;
  return e;
};

let snapshot = null;
const rates = new Map();   // name -> {t, calls, perSec}
const samples = new Map(); // name -> [{t, s, f, w}], kept by the page (the runtime keeps no history)
const expanded = new Map(); // group base name -> bool
const rows = new Map();    // row id -> <tr>

// ---- figures the page derives: calls per second and the sparkline history ----
function take(data) {
  const now = performance.now();
  const seen = new Set();
  for (const b of data.breakers || []) {
    seen.add(b.name);
    const r = rates.get(b.name);
    let perSec = r ? r.perSec : null;
    if (r && now > r.t) perSec = Math.max(0, b.calls - r.calls) * 1000 / (now - r.t);
    rates.set(b.name, { t: now, calls: b.calls, perSec });
    const h = samples.get(b.name) || [];
    h.push({ t: now, s: b.state, f: b.failure_rate_pct, w: b.slow_rate_pct });
    while (h.length && now - h[0].t > HISTORY_MS) h.shift();
    samples.set(b.name, h);
  }
  for (const name of [...rates.keys()]) {
    if (!seen.has(name)) { rates.delete(name); samples.delete(name); }
  }
  snapshot = data;
}

// ---- rendering ----
function baseName(b) {
  const k = b.key;
  if (k === null || k === undefined) return null;
  const tail = '/' + k;
  return b.name.endsWith(tail) ? b.name.slice(0, -tail.length) : b.name;
}

function render() {
  if (!snapshot) return;
  const q = $('filter').value.trim().toLowerCase();
  const match = (s) => !q || s.toLowerCase().includes(q);
  const groups = new Map();
  const order = [];
  for (const b of snapshot.breakers || []) {
    const base = baseName(b);
    if (base === null) { order.push({ single: b }); continue; }
    if (!groups.has(base)) { groups.set(base, []); order.push({ base }); }
    groups.get(base).push(b);
  }
  const wanted = [];
  let shown = 0;
  for (const item of order) {
    if (item.single) {
      if (!match(item.single.name)) continue;
      wanted.push(breakerRow(item.single, false));
      shown++;
      continue;
    }
    const all = groups.get(item.base);
    const hits = match(item.base) ? all : all.filter((b) => match(b.name));
    if (!hits.length) continue;
    if (!expanded.has(item.base)) expanded.set(item.base, all.length <= OPEN_GROUP_MAX);
    const open = expanded.get(item.base) || (q !== '' && hits.length <= OPEN_GROUP_MAX);
    wanted.push(groupRow(item.base, all, hits, open));
    if (open) for (const b of hits) wanted.push(breakerRow(b, true));
    shown += hits.length;
  }
  const total = (snapshot.breakers || []).length;
  $('b-count').textContent = q ? '(' + shown + ' of ' + total + ')' : '(' + total + ')';
  $('b-empty').hidden = wanted.length > 0;
  place($('b-rows'), wanted);

  const pools = snapshot.bulkheads || [];
  $('h-count').textContent = '(' + pools.length + ')';
  $('h-empty').hidden = pools.length > 0;
  place($('h-rows'), pools.map(bulkheadRow));
  const keep = new Set(wanted.concat(pools.map((p) => rows.get('h:' + p.name))));
  for (const [id, tr] of rows) if (!keep.has(tr)) rows.delete(id);
  renderSettings();
  renderRetries();
}

// Moves rows only when the order changed, so keyboard focus on a button survives a refresh.
function place(tbody, wanted) {
  const now = [...tbody.children];
  if (now.length === wanted.length && now.every((tr, i) => tr === wanted[i])) return;
  const focused = document.activeElement;
  tbody.replaceChildren(...wanted);
  if (focused && focused !== document.activeElement && document.contains(focused)) focused.focus();
}

function row(id, build) {
  let tr = rows.get(id);
  if (!tr) { tr = build(); rows.set(id, tr); }
  return tr;
}

function cell(tr, label, cls) {
  const td = el('td', cls);
  td.dataset.label = label;
  tr.append(td);
  return td;
}

function breakerRow(b, keyed) {
  const tr = row('b:' + b.name, () => {
    const tr = el('tr', keyed ? 'keyed' : '');
    tr.dataset.name = b.name;
    for (const [label, cls] of [['Name', 'name'], ['State', ''], ['In state', 'num'],
      ['Calls/s', 'num'], ['Failures', 'num'], ['Slow', 'num'], ['p95', 'num'],
      ['Rejected', 'num'], ['Stuck', ''], ['Last minutes', ''], ['Actions', '']]) {
      cell(tr, label, cls);
    }
    const acts = el('div', 'actions');
    for (const verb of ['open', 'close', 'reset']) {
      const btn = el('button', verb === 'reset' ? '' : 'danger', VERBS[verb][0]);
      btn.type = 'button';
      btn.dataset.verb = verb;
      btn.setAttribute('aria-label', VERBS[verb][0] + ' ' + b.name);
      acts.append(btn);
    }
    tr.lastChild.append(acts);
    return tr;
  });
  const c = tr.children;
  tr.dataset.state = b.state;
  c[0].textContent = keyed ? b.key : b.name;
  c[0].title = b.name;
  c[1].replaceChildren(el('span', 'state s-' + b.state, LABELS[b.state] || b.state));
  // A breaker ramping traffic back in after half-open passed (issue 22) is closed, and says how far.
  if (typeof b.ramp_share === 'number') {
    c[1].append(el('span', 'small ramp', 'ramping ' + Math.round(b.ramp_share * 100) + ' %'));
  }
  // Forced closed either records into the window (force_close) or records nothing (issue 31).
  if (b.state === 'forced_closed') {
    c[1].append(el('span', 'small recording', b.recording === false ? 'recording nothing' : 'recording'));
  }
  // A force given an expiry (`?for=10m`) says when it lapses: the breaker goes back on its own.
  if (typeof b.force_expires_in_s === 'number') {
    c[1].append(el('span', 'small expires', 'ends in ' + duration(b.force_expires_in_s)));
  }
  c[2].textContent = duration(b.time_in_state_s);
  const r = rates.get(b.name);
  const rated = r && r.perSec !== null;
  c[3].textContent = rated ? r.perSec.toFixed(r.perSec < 10 ? 1 : 0) : '…';
  if (rated) tr.dataset.rated = '1';
  c[4].textContent = pct(b.failure_rate_pct);
  c[5].replaceChildren(pct(b.slow_rate_pct));
  // From which latency a call is slow; under a timeout alone, learned from the usual latency.
  if (typeof b.slow_bound_s === 'number') {
    const usual = typeof b.usual_latency_s === 'number' ? ' (5× usual ' + duration(b.usual_latency_s) + ')' : '';
    c[5].append(el('span', 'small bound', 'from ' + duration(b.slow_bound_s) + usual));
  }
  c[6].textContent = b.p95_s === null || b.p95_s === undefined ? '—' : duration(b.p95_s);
  const [total, detail] = rejected(b);
  c[7].replaceChildren(String(total));
  if (detail) c[7].append(el('span', 'small', detail));
  c[8].replaceChildren(b.stuck ? el('span', 'stuck', 'STUCK') : 'no');
  c[9].replaceChildren(spark(samples.get(b.name) || [], b));
  return tr;
}

// Per-reason counts when the JSON has them, else the breaker's and the bulkhead's totals.
function rejected(b) {
  const by = b.rejected_by_reason;
  if (by && typeof by === 'object') {
    const parts = Object.entries(by).filter(([, n]) => n > 0);
    const total = Object.values(by).reduce((a, n) => a + (Number(n) || 0), 0);
    return [total, parts.map(([k, n]) => k.replace(/_/g, ' ') + ' ' + n).join(' · ')];
  }
  const bulk = b.rejected_by_bulkhead || 0;
  return [(b.rejected || 0) + bulk, bulk ? 'breaker ' + (b.rejected || 0) + ' · bulkhead ' + bulk : ''];
}

function groupRow(base, all, hits, open) {
  const tr = row('g:' + base, () => {
    const tr = el('tr', 'group');
    tr.dataset.group = base;
    const td = el('td');
    td.colSpan = COLS;
    const btn = el('button', 'toggle');
    btn.type = 'button';
    btn.dataset.toggle = base;
    td.append(btn, el('span'));
    tr.append(td);
    return tr;
  });
  const [btn, info] = tr.firstChild.children;
  btn.textContent = (open ? '▾ ' : '▸ ') + base;
  btn.setAttribute('aria-expanded', String(open));
  const states = new Map();
  for (const b of all) states.set(b.state, (states.get(b.state) || 0) + 1);
  const stuck = all.filter((b) => b.stuck).length;
  const count = hits.length === all.length ? all.length + ' keys' : hits.length + ' of ' + all.length + ' keys';
  info.textContent = ' — ' + count + ': ' +
    [...states].map(([s, n]) => n + ' ' + (LABELS[s] || s)).join(', ') + (stuck ? ', ' + stuck + ' STUCK' : '');
  return tr;
}

function bulkheadRow(p) {
  const tr = row('h:' + p.name, () => {
    const tr = el('tr');
    tr.dataset.name = p.name;
    for (const [label, cls] of [['Name', 'name'], ['Pool', 'num'], ['In flight', 'num'], ['Peak', 'num'],
      ['Admitted', 'num'], ['Rejected', 'num']]) cell(tr, label, cls);
    return tr;
  });
  const c = tr.children;
  c[0].textContent = p.name;
  // An adaptive pool shows its limit now and its bounds.
  const a = p.adaptive;
  c[1].textContent = a ? p.pool + ' (adaptive ' + a.min_pool + '..' + a.max_pool + ')' : p.pool;
  c[2].textContent = p.in_flight;
  c[3].textContent = p.peak;
  c[4].textContent = p.admitted;
  c[5].textContent = p.rejected;
  return tr;
}

// ---- sparkline: state band at the bottom, failure (solid) and slow (dashed) rate above ----
const SVG = 'http://www.w3.org/2000/svg';
function spark(h, b) {
  const W = 140, H = 32, BAND = 6, TOP = H - BAND - 2;
  const now = performance.now();
  // The axis spans the history the page has (at least a minute), up to the whole window.
  const span = Math.min(HISTORY_MS, Math.max(60000, h.length ? now - h[0].t : 0));
  const svg = document.createElementNS(SVG, 'svg');
  svg.setAttribute('class', 'spark');
  svg.setAttribute('width', W);
  svg.setAttribute('height', H);
  svg.setAttribute('viewBox', '0 0 ' + W + ' ' + H);
  svg.setAttribute('role', 'img');
  const opened = h.filter((p, i) => i > 0 && p.s !== h[i - 1].s && p.s !== 'closed').length;
  svg.setAttribute('aria-label', 'last ' + duration(span / 1000) + ': ' +
    pct(b.failure_rate_pct) + ' failures, ' + pct(b.slow_rate_pct) + ' slow now, ' + opened + ' changes away from closed');
  const x = (t) => Math.max(0, W - (now - t) / span * W);
  const y = (v) => TOP - Math.min(100, Math.max(0, v || 0)) / 100 * (TOP - 1);
  const add = (tag, attrs) => {
    const e = document.createElementNS(SVG, tag);
    for (const k in attrs) e.setAttribute(k, attrs[k]);
    svg.append(e);
  };
  add('line', { class: 'axis', x1: 0, x2: W, y1: TOP + 0.5, y2: TOP + 0.5 });
  // One rect per run of the same state, so no seams between samples.
  for (let i = 0; i < h.length;) {
    let j = i + 1;
    while (j < h.length && h[j].s === h[i].s) j++;
    const x0 = x(h[i].t), x1 = j < h.length ? x(h[j].t) : W;
    add('rect', { class: 'band b-' + h[i].s, x: x0, y: H - BAND, width: Math.max(1, x1 - x0), height: BAND,
      'shape-rendering': 'crispEdges' });
    i = j;
  }
  if (h.length > 1) {
    add('polyline', { class: 'f', points: h.map((p) => x(p.t).toFixed(1) + ',' + y(p.f).toFixed(1)).join(' ') });
    add('polyline', { class: 'w', points: h.map((p) => x(p.t).toFixed(1) + ',' + y(p.w).toFixed(1)).join(' ') });
  }
  return svg;
}

// ---- formatting ----
function duration(s) {
  if (s === null || s === undefined || !isFinite(s)) return '—';
  if (s < 1) return (s * 1000).toFixed(s < 0.01 ? 1 : 0) + ' ms';
  if (s < 60) return s.toFixed(1) + ' s';
  if (s < 3600) return Math.floor(s / 60) + ' m ' + Math.floor(s % 60) + ' s';
  if (s < 86400) return Math.floor(s / 3600) + ' h ' + Math.floor(s % 3600 / 60) + ' m';
  return Math.floor(s / 86400) + ' d ' + Math.floor(s % 86400 / 3600) + ' h';
}
const pct = (v) => (v === null || v === undefined ? '—' : (v < 10 && v > 0 ? v.toFixed(1) : Math.round(v)) + ' %');
const clock = (d) => d.toLocaleTimeString([], { hour12: false });
