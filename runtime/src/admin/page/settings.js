// fusebox operator page, settings (issue 29): which settings differ from the code's, where each
// came from (env, file, admin, fleet), and a form to change one. Loaded between render.js and
// page.js in the same strict-mode block; it uses page.js's BASE, TIMEOUT_MS, authHeaders and
// flash only when called, after the whole block ran.

// Every setting not at the code's value, of every breaker and bulkhead in the snapshot.
function renderSettings() {
  if (!snapshot) return;
  const list = [];
  for (const [kind, all] of [['breaker', snapshot.breakers || []], ['bulkhead', snapshot.bulkheads || []]]) {
    for (const g of all) {
      for (const s of g.settings || []) {
        if (s.source !== 'code') list.push({ kind, name: g.name, s, exp: g.settings_change_expires_in_s });
      }
    }
  }
  $('cfg-count').textContent = '(' + list.length + ')';
  $('cfg-empty').hidden = list.length > 0;
  $('cfg-rows').replaceChildren(...list.map(settingRow));
}

function settingRow(o) {
  const tr = el('tr');
  const add = (label, text, cls) => { const td = cell(tr, label, cls); td.textContent = text; return td; };
  add('Kind', o.kind);
  add('Name', o.name, 'name');
  add('Setting', o.s.key);
  add('In force', o.s.value);
  add('Code', o.s.code === null || o.s.code === undefined ? '—' : o.s.code);
  const src = add('From', o.s.source);
  if ((o.s.source === 'admin' || o.s.source === 'fleet') && typeof o.exp === 'number') {
    src.append(el('span', 'small', 'ends in ' + duration(o.exp)));
  }
  const btn = el('button', '', 'Change');
  btn.type = 'button';
  btn.setAttribute('aria-label', 'Change ' + o.s.key + ' of ' + o.name);
  btn.addEventListener('click', () => {
    $('cfg-kind').value = o.kind;
    $('cfg-name').value = o.name;
    $('cfg-key').value = o.s.key;
    $('cfg-value').value = o.s.value;
    $('cfg-value').focus();
  });
  cell(tr, 'Actions').append(btn);
  return tr;
}

// POST settings/{kind}/{name}?key=value[&for=..]: the router checks it with the settings table
// and answers 400 with the reason, shown as is.
async function changeSetting(kind, name, key, value, expiry) {
  let url = BASE + 'settings/' + kind + '/' + encodeURIComponent(name) +
    '?' + encodeURIComponent(key) + '=' + encodeURIComponent(value);
  if (expiry) url += '&for=' + encodeURIComponent(expiry);
  let resp;
  try {
    resp = await fetch(url, { method: 'POST', headers: authHeaders(), signal: AbortSignal.timeout(TIMEOUT_MS) });
  } catch (e) {
    return flash('Changing ' + key + ' of ' + name + ' failed: the service is not answering.');
  }
  if (resp.status === 401) return askToken('The admin router refused this token (401 Unauthorized).');
  if (!resp.ok) {
    const text = (await resp.text().catch(() => '')).trim().slice(0, 300);
    return flash('Changing ' + key + ' of ' + name + ' refused: ' + resp.status + (text ? ' ' + text : ''));
  }
  flash(key + ' of ' + name + ' is now ' + value + (expiry ? ' for ' + expiry : '') + '.');
  stop();
  poll();
}

$('cfg-form').addEventListener('submit', (e) => {
  e.preventDefault();
  const v = (id) => $(id).value.trim();
  if (!v('cfg-name') || !v('cfg-key') || !v('cfg-value')) return;
  changeSetting(v('cfg-kind'), v('cfg-name'), v('cfg-key'), v('cfg-value'), v('cfg-for'));
});
