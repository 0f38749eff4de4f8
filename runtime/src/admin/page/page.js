// fusebox operator page, part 2 of 2: the token, polling GET breakers with it, the confirmed
// actions and the wiring. Loaded after render.js, in the same <script>.

const PERIOD_MS = 1500;
const TIMEOUT_MS = 4000;
const STORE = 'fusebox-admin-token';
// Relative to where the router is mounted, with or without a trailing slash.
const BASE = location.pathname.endsWith('/') ? location.pathname : location.pathname + '/';
let token = null;
let timer = null;
let lastOk = null;
let downSince = null;

// ---- token: typed in, or once from #token=..., kept in sessionStorage only ----
function takeToken() {
  const frag = new URLSearchParams(location.hash.slice(1));
  const fromUrl = frag.get('token');
  if (fromUrl !== null) {
    history.replaceState(null, '', location.pathname + location.search);
    if (fromUrl) sessionStorage.setItem(STORE, fromUrl);
  }
  return sessionStorage.getItem(STORE);
}

function askToken(message) {
  stop();
  token = null;
  sessionStorage.removeItem(STORE);
  $('main').hidden = true;
  $('logout').hidden = true;
  $('down').hidden = true;
  $('login').hidden = false;
  const msg = $('auth-msg');
  msg.textContent = message || 'Enter the admin token to see the breakers.';
  msg.hidden = false;
  $('status').textContent = 'No token: nothing is shown without one.';
  $('token').value = '';
  $('token').focus();
}

function start(t) {
  token = t;
  $('login').hidden = true;
  $('auth-msg').hidden = true;
  $('main').hidden = false;
  $('logout').hidden = false;
  $('status').textContent = 'Loading…';
  stop();
  poll();
}

function stop() {
  if (timer !== null) clearTimeout(timer);
  timer = null;
}

const authHeaders = () => ({ Authorization: 'Bearer ' + token });

// ---- polling ----
async function poll() {
  timer = null;
  const mine = token;
  let resp;
  try {
    resp = await fetch(BASE + 'breakers', {
      headers: authHeaders(), cache: 'no-store', signal: AbortSignal.timeout(TIMEOUT_MS),
    });
  } catch (e) {
    if (mine === token) notAnswering(e && e.name === 'TimeoutError' ? 'no answer within 4 s' : 'connection failed');
    return schedule(mine);
  }
  if (mine !== token) return;
  if (resp.status === 401) {
    return askToken('The admin router refused this token (401 Unauthorized). ' +
      'Enter the token the service was started with (FUSEBOX_ADMIN_TOKEN).');
  }
  if (!resp.ok) {
    notAnswering('it answered ' + resp.status);
    return schedule(mine);
  }
  let data;
  try {
    data = await resp.json();
  } catch (e) {
    notAnswering('its answer was not JSON');
    return schedule(mine);
  }
  answering();
  take(data);
  render();
  renderShadows();
  schedule(mine);
}

function schedule(mine) {
  if (mine === token && token !== null && timer === null) timer = setTimeout(poll, PERIOD_MS);
}

function notAnswering(why) {
  if (downSince === null) downSince = new Date();
  const down = $('down');
  down.textContent = 'Service not answering since ' + clock(downSince) + ' (' + why + '). ' +
    (lastOk ? 'The figures below are from ' + clock(lastOk) + '. ' : '') + 'Retrying every ' +
    PERIOD_MS / 1000 + ' s.';
  down.hidden = false;
  $('main').classList.add('stale');
  $('status').textContent = 'Not answering';
}

function answering() {
  downSince = null;
  lastOk = new Date();
  $('down').hidden = true;
  $('main').classList.remove('stale');
  $('status').textContent = 'Updated ' + clock(lastOk) + ' · every ' + PERIOD_MS / 1000 + ' s';
}

// ---- actions: a real <dialog>, then POST with the token; the row shows the answer ----
let pending = null;
function ask(name, verb) {
  pending = { name, verb };
  $('c-title').textContent = VERBS[verb][0] + ' ' + name + '?';
  $('c-text').textContent = VERBS[verb][1];
  $('c-ok').textContent = VERBS[verb][0];
  const withFor = verb !== 'reset';
  $('c-for-row').hidden = !withFor;
  $('c-for').hidden = !withFor;
  $('c-for').value = '';
  $('confirm').returnValue = '';
  $('confirm').showModal();
}

async function act(name, verb, expiry) {
  // The verb first: a keyed breaker whose key is `open` cannot be mistaken for an action.
  let url = BASE + 'actions/' + verb + '/' + encodeURIComponent(name);
  if (expiry) url += '?for=' + encodeURIComponent(expiry);
  flash(VERBS[verb][0] + ' ' + name + '…');
  let resp;
  try {
    resp = await fetch(url, { method: 'POST', headers: authHeaders(), signal: AbortSignal.timeout(TIMEOUT_MS) });
  } catch (e) {
    return flash(VERBS[verb][0] + ' ' + name + ' failed: the service is not answering.');
  }
  if (resp.status === 401) return askToken('The admin router refused this token (401 Unauthorized).');
  if (!resp.ok) {
    const text = (await resp.text().catch(() => '')).trim().slice(0, 200);
    return flash(VERBS[verb][0] + ' ' + name + ' failed: ' + resp.status + (text ? ' ' + text : ''));
  }
  const b = await resp.json().catch(() => null);
  flash(name + ' is now ' + (b ? LABELS[b.state] || b.state : 'changed') + (expiry ? ' (for ' + expiry + ')' : '') + '.');
  stop();
  poll();
}

let flashTimer = null;
function flash(text) {
  $('flash').textContent = text;
  clearTimeout(flashTimer);
  flashTimer = setTimeout(() => { $('flash').textContent = ''; }, 10000);
}


// ---- wiring ----
$('login').addEventListener('submit', (e) => {
  e.preventDefault();
  const t = $('token').value.trim();
  if (!t) return;
  sessionStorage.setItem(STORE, t);
  start(t);
});
$('logout').addEventListener('click', () => askToken(''));
$('filter').addEventListener('input', render);
$('b-rows').addEventListener('click', (e) => {
  const btn = e.target.closest('button');
  if (!btn) return;
  if (btn.dataset.toggle !== undefined) {
    const base = btn.dataset.toggle;
    expanded.set(base, btn.getAttribute('aria-expanded') !== 'true');
    render();
    btn.focus();
  } else if (btn.dataset.verb) {
    ask(btn.closest('tr').dataset.name, btn.dataset.verb);
  }
});
$('confirm').addEventListener('close', () => {
  const p = pending;
  pending = null;
  if (p && $('confirm').returnValue === 'ok') act(p.name, p.verb, p.verb === 'reset' ? '' : $('c-for').value.trim());
});
window.addEventListener('hashchange', () => {
  const t = takeToken();
  if (t && t !== token) start(t);
});

const t = takeToken();
if (t) start(t); else askToken('');
