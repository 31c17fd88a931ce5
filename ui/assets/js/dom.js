// Building the DOM from elements, never from HTML strings: every string
// from the API becomes a text node, so nothing the cluster holds can inject
// markup or script.

// h builds an element: h('a', {href: '/ui/jobs', class: 'x'}, 'text', child).
// Attributes whose value is null, undefined or false are left out; "on..."
// attributes are event listeners. Children may be nodes, strings, numbers
// or (nested) arrays of them; null and false are skipped.
export function h(tag, attrs, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k.startsWith('on') && typeof v === 'function') el.addEventListener(k.slice(2), v);
    else if (k === 'class') el.className = v;
    else el.setAttribute(k, v === true ? '' : String(v));
  }
  append(el, children);
  return el;
}

// append adds children (as h takes them) to el.
export function append(el, children) {
  for (const c of [children].flat(Infinity)) {
    if (c === null || c === undefined || c === false) continue;
    el.append(c instanceof Node ? c : String(c));
  }
  return el;
}

// replace empties el and fills it with children.
export function replace(el, ...children) {
  el.replaceChildren();
  return append(el, children);
}

// section is a titled part of a page; its body is replaced as data arrives.
// With hideTitle the title is for screen readers only (a list page whose
// heading says the same).
export function section(title, id, {hideTitle = false} = {}) {
  const body = h('div', {class: 'section-body'}, h('p', {class: 'loading'}, 'Loading…'));
  const el = h('section', {'aria-labelledby': id + '-title', id},
    h('h2', {id: id + '-title', class: hideTitle ? 'visually-hidden' : null}, title), body);
  return {el, body};
}

// maxRows bounds a table: a cluster's thousands of evaluations or
// allocations would make every update slow, and the newest are the ones
// that matter (tables are sorted before they get here).
const maxRows = 500;

// table renders rows under columns. A column is {label, cell(row), num}:
// cell returns what h takes; num right-aligns it. empty is shown without
// rows.
export function table(caption, columns, rows, empty) {
  if (!rows || rows.length === 0) return h('p', {class: 'empty'}, empty || 'None.');
  const shown = rows.length > maxRows ? rows.slice(0, maxRows) : rows;
  return h('div', {class: 'table-wrap'},
    h('table', null,
      h('caption', {class: 'visually-hidden'}, caption),
      h('thead', null, h('tr', null, columns.map(c =>
        h('th', {scope: 'col', class: c.num ? 'num' : null}, c.label)))),
      h('tbody', null, shown.map(r => h('tr', null, columns.map(c =>
        h('td', {class: c.num ? 'num' : null}, c.cell(r))))))),
    shown !== rows ? h('p', {class: 'hint'}, `Showing the first ${maxRows} of ${rows.length}; the CLI lists them all.`) : null);
}

// kv renders [label, value] pairs as a description list; pairs whose value
// is null or undefined are left out.
export function kv(pairs) {
  return h('dl', {class: 'kv'}, pairs.filter(([, v]) => v !== null && v !== undefined && v !== '')
    .map(([k, v]) => [h('dt', null, k), h('dd', null, v)]));
}

// message is a notice inside a section: kind is "info", "warn" or "error".
export function message(kind, ...children) {
  return h('div', {class: 'msg msg-' + kind, role: kind === 'error' ? 'alert' : null}, ...children);
}
