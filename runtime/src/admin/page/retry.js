// fusebox operator page, retries: per name, the calls that went through a retry, the attempts
// made, the retries the budget granted and refused, and the `retry_after` hints that held the
// breaker open, from the same poll (`retries` of GET /breakers). The section is built here, so
// this panel lives in its own file; render() calls renderRetries() after the other tables.

const RETRY_COLS = [
  ['Name', 'name', ''],
  ['Calls', 'num', 'calls that went through a retry of this name (first attempts)'],
  ['Attempts', 'num', 'attempts made: calls plus retries'],
  ['Retries', 'num', 'retries the budget granted'],
  ['Budget exhausted', 'num', 'retries the budget refused: the failure was returned without another attempt'],
  ['Held open', 'num', 'retry_after hints that held the breaker open until the time the dependency gave'],
];
const retryRows = new Map(); // name -> <tr>

function retrySection() {
  if ($('retries')) return;
  const s = el('section');
  s.id = 'retries';
  s.setAttribute('aria-labelledby', 'r-title');
  const h = el('h2', null, 'Retries ');
  h.id = 'r-title';
  const count = el('span', 'count');
  count.id = 'r-count';
  h.append(count);
  const tr = el('tr');
  for (const [label, cls, title] of RETRY_COLS) {
    const th = el('th', cls === 'num' ? 'num' : '', label);
    th.scope = 'col';
    if (title) th.title = title;
    tr.append(th);
  }
  const head = el('thead');
  head.append(tr);
  const body = el('tbody');
  body.id = 'r-rows';
  const table = el('table');
  table.id = 'retry-table';
  table.append(head, body);
  const scroll = el('div', 'scroll');
  scroll.append(table);
  const empty = el('p', 'empty', 'No retry.');
  empty.id = 'r-empty';
  s.append(h, scroll, empty);
  $('main').append(s);
}

function retryRow(r) {
  let tr = retryRows.get(r.name);
  if (!tr) {
    tr = el('tr');
    tr.dataset.name = r.name;
    for (const [label, cls] of RETRY_COLS) cell(tr, label, cls);
    retryRows.set(r.name, tr);
  }
  const c = tr.children;
  c[0].textContent = r.name;
  c[1].textContent = r.calls;
  c[2].textContent = r.attempts;
  c[3].textContent = r.retries;
  c[4].textContent = r.budget_exhausted;
  c[5].textContent = r.held_open === undefined ? '' : r.held_open;
  // A budget that refuses is the figure to look at: the dependency is failing beyond it.
  tr.classList.toggle('exhausted', r.budget_exhausted > 0);
  return tr;
}

function renderRetries() {
  retrySection();
  const list = snapshot.retries || [];
  $('r-count').textContent = '(' + list.length + ')';
  $('r-empty').hidden = list.length > 0;
  place($('r-rows'), list.map(retryRow));
  const keep = new Set(list.map((r) => r.name));
  for (const name of [...retryRows.keys()]) if (!keep.has(name)) retryRows.delete(name);
}
