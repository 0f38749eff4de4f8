// fusebox operator page, the shadow panel (issue 29): every breaker with shadow settings, what
// they would have done on its calls, promote and drop; and a form to set a shadow. Loaded
// between render.js and page.js, in the same <script>; page.js calls renderShadows() after
// each refresh. Values go into the DOM through textContent only.

const SHADOW_VERBS = {
  promote: ['Promote', 'The shadow ends and its settings become the live ones (a live change from the admin source, until cleared).'],
  drop: ['Drop', 'The shadow ends; the live settings are not changed.'],
};

// The candidate's deciding settings, short: what an operator compares with the live ones
// (the JSON form of `Settings`: durations in seconds under `_s` names).
function candidateText(s) {
  if (!s) return '';
  const parts = ['failure ≥ ' + s.failure_rate + ' %'];
  if (s.slow) parts.push('slow ≥ ' + duration(s.slow.bound_s) + ' at ' + s.slow.rate + ' %');
  if (s.timeout_s !== null && s.timeout_s !== undefined) parts.push('timeout ' + duration(s.timeout_s));
  const w = s.window || {};
  if (w.calls !== undefined) parts.push('window ' + w.calls + ' calls');
  else if (w.time_s !== undefined) parts.push('window ' + duration(w.time_s));
  parts.push('min ' + s.min_calls + ' calls');
  return parts.join(' · ');
}

// An age in seconds as the wall-clock time it was, on this page's clock.
const at = (ago) => (ago === null || ago === undefined ? '—' : clock(new Date(Date.now() - ago * 1000)));

const shadowRows = new Map(); // breaker name -> <tr>, kept so focus and clicks survive a refresh

function renderShadows() {
  if (!snapshot) return;
  const withShadow = (snapshot.breakers || []).filter((b) => b.shadow);
  $('s-count').textContent = '(' + withShadow.length + ')';
  $('s-empty').hidden = withShadow.length > 0;
  $('s-table').hidden = withShadow.length === 0;
  const names = (snapshot.breakers || []).map((b) => b.name);
  const list = $('s-names');
  if (list.children.length !== names.length || names.some((n, i) => list.children[i].value !== n)) {
    list.replaceChildren(...names.map((n) => { const o = el('option'); o.value = n; return o; }));
  }
  const wanted = withShadow.map(shadowRow);
  for (const [name, tr] of shadowRows) if (!wanted.includes(tr)) shadowRows.delete(name);
  place($('s-rows'), wanted);
}

const SHADOW_COLS = [['Breaker', 'name'], ['Candidate', 'cand'], ['Shadow state', ''],
  ['Would have opened', 'num'], ['Would have closed', 'num'], ['Would have refused', 'num'],
  ['Calls seen', 'num'], ['Actions', '']];

function shadowRow(b) {
  let tr = shadowRows.get(b.name);
  if (!tr) {
    tr = el('tr');
    tr.dataset.name = b.name;
    for (const [label, cls] of SHADOW_COLS) cell(tr, label, cls);
    const acts = el('div', 'actions');
    for (const verb of ['promote', 'drop']) {
      const btn = el('button', verb === 'drop' ? 'danger' : '', SHADOW_VERBS[verb][0]);
      btn.type = 'button';
      btn.dataset.shadow = verb;
      btn.setAttribute('aria-label', SHADOW_VERBS[verb][0] + ' the shadow of ' + b.name);
      acts.append(btn);
    }
    tr.lastChild.append(acts);
    shadowRows.set(b.name, tr);
  }
  const s = b.shadow;
  const c = tr.children;
  tr.dataset.state = s.state;
  c[0].textContent = b.name;
  c[1].textContent = candidateText(s.settings);
  c[2].replaceChildren(el('span', 'state s-' + s.state, LABELS[s.state] || s.state),
    el('span', 'small', 'live: ' + (LABELS[b.state] || b.state)));
  c[3].textContent = at(s.opened_ago_s);
  c[4].textContent = at(s.closed_ago_s);
  c[5].textContent = String(s.would_have_refused);
  c[6].textContent = s.calls_seen + ' in ' + duration(s.age_s);
  return tr;
}

// POST /shadow/{verb}/{name}[?settings]: the verb first, so no name is read as a verb.
async function shadowAct(verb, name, query) {
  const url = BASE + 'shadow/' + verb + '/' + encodeURIComponent(name) + (query ? '?' + query : '');
  const what = (verb === 'set' ? 'Shadow of ' : SHADOW_VERBS[verb][0] + ' the shadow of ') + name;
  flash(what + '…');
  let resp;
  try {
    resp = await fetch(url, { method: 'POST', headers: authHeaders(), signal: AbortSignal.timeout(TIMEOUT_MS) });
  } catch (e) {
    return flash(what + ' failed: the service is not answering.');
  }
  if (resp.status === 401) return askToken('The admin router refused this token (401 Unauthorized).');
  const text = (await resp.text().catch(() => '')).trim();
  if (!resp.ok) return flash(what + ' failed: ' + resp.status + (text ? ' ' + text.slice(0, 300) : ''));
  if (verb === 'promote') {
    let p = null;
    try { p = JSON.parse(text).promoted; } catch (e) { p = null; }
    flash('Promoted the shadow of ' + name + ': now the live settings (' + candidateText(p) + ').');
  } else {
    flash(verb === 'set' ? 'Shadow settings set on ' + name + '.' : 'Dropped the shadow of ' + name + '.');
  }
  stop();
  poll();
}

// "trip_p95=500ms, failure_rate=20" (commas, spaces or & between pairs) as a query string.
function settingsQuery(text) {
  const q = new URLSearchParams();
  for (const pair of text.split(/[\s,&]+/).filter(Boolean)) {
    const i = pair.indexOf('=');
    if (i <= 0) return null;
    q.append(pair.slice(0, i), pair.slice(i + 1));
  }
  return [...q.keys()].length ? q.toString() : null;
}

$('s-form').addEventListener('submit', (e) => {
  e.preventDefault();
  const name = $('s-name').value.trim();
  const query = settingsQuery($('s-settings').value);
  if (!name || query === null) return flash('Give a breaker and settings as key=value pairs, e.g. trip_p95=500ms failure_rate=20.');
  shadowAct('set', name, query);
});
$('s-rows').addEventListener('click', (e) => {
  const btn = e.target.closest('button');
  if (!btn || !btn.dataset.shadow) return;
  const verb = btn.dataset.shadow;
  const name = btn.closest('tr').dataset.name;
  if (window.confirm(SHADOW_VERBS[verb][0] + ' the shadow of ' + name + '?\n' + SHADOW_VERBS[verb][1])) shadowAct(verb, name, '');
});
