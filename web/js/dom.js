// Building the page from data: elements are made with text nodes, never from HTML strings, so a
// job or tenant name cannot inject markup.

// h('td', {class: 'num'}, '3'): an element with attributes (on* as listeners) and children
// (strings, numbers, nodes, arrays of them; null and false are skipped).
export function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === null || v === undefined || v === false) continue;
    if (k.startsWith('on')) el.addEventListener(k.slice(2), v);
    else el.setAttribute(k, v === true ? '' : String(v));
  }
  append(el, children);
  return el;
}

function append(el, children) {
  for (const c of children) {
    if (c === null || c === undefined || c === false) continue;
    if (Array.isArray(c)) append(el, c);
    else el.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
}

// A table: columns [{label, num?}], rows of cells (each a string, number or node). `empty` is
// shown in place of a table with no rows.
export function table(columns, rows, empty = 'none') {
  if (rows.length === 0) return h('p', {class: 'muted'}, empty);
  return h('table', {},
    h('thead', {}, h('tr', {}, columns.map((c) => h('th', {class: c.num ? 'num' : null}, c.label)))),
    h('tbody', {}, rows.map((r) => h('tr', {}, r.map((cell, i) => h('td', {class: columns[i].num ? 'num' : null}, cell))))));
}

export function section(title, ...children) {
  return h('section', {}, h('h2', {}, title), ...children);
}

// A bar of `value` out of `max`, with a mark at `mark` (a guarantee); all in the same unit.
export function bar(value, max, mark) {
  const pct = (x) => `${Math.max(0, Math.min(100, (100 * x) / max))}%`;
  const b = h('div', {class: 'bar', title: `${value} of ${max}`}, h('span'));
  b.firstChild.style.width = max > 0 ? pct(value) : '0%';
  if (mark !== undefined && max > 0) {
    const i = h('i');
    i.style.left = pct(mark);
    b.append(i);
  }
  return b;
}

// The main area, emptied and filled with `children`.
export function show(main, ...children) {
  main.replaceChildren(...children.flat().filter((c) => c));
}
