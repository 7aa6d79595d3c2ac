// Spend: GPU-hours and cost per tenant this month (GET /v1/usage), each org's invoice for a month
// (GET /v1/invoices: a draft until the month closes), and budgets with their warnings
// (GET /v1/budgets).
import {ApiError, get, q, visible} from '../api.js';
import {h, section, show, table} from '../dom.js';
import {when} from '../format.js';

export async function render({main, query, signal}) {
  const now = new Date();
  const months = [0, 1, 2].map((k) => {
    const d = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() - k, 1));
    return d.toISOString().slice(0, 7);
  });
  const period = months.includes(query.get('period')) ? query.get('period') : months[0];
  const from = `${period}-01T00:00:00Z`;
  const next = new Date(Date.parse(from));
  next.setUTCMonth(next.getUTCMonth() + 1);
  const to = new Date(Math.min(Date.now(), next.getTime())).toISOString().replace(/\.\d+Z$/, 'Z');

  const [usage, {tenants}, budgets] = await Promise.all([
    visible(get(`/v1/usage${q({from, to})}`, {signal})),
    get('/v1/tenants', {signal}),
    visible(get('/v1/budgets', {signal})),
  ]);
  const hidden = h('p', {class: 'hidden-note'}, 'not visible to you');
  // The orgs the token sees whole; a token scoped inside an org asks for its part of its org.
  const orgs = tenants.filter((t) => t.parent === null).map((t) => t.path);
  const invoices = await Promise.all((orgs.length ? orgs : ['']).map((org) => invoice(org, period, signal)));
  const pick = h('select', {id: 'period', onchange: (e) => { location.hash = `#/spend?period=${e.target.value}`; }},
    months.map((m) => h('option', {value: m, selected: m === period}, m)));

  show(main,
    h('h1', {}, 'Spend'),
    h('form', {class: 'inline'}, h('label', {}, 'Month', pick)),
    section(`Usage ${period} (${when(from)} to ${when(to)})`, usage === null ? hidden : table(
      [{label: 'Tenant'}, {label: 'Jobs', num: true}, {label: 'GPU-hours'}, {label: 'CPU-hours', num: true},
        {label: 'Memory GiB-hours', num: true}, {label: 'Cost', num: true}],
      usage.tenants.map((t) => [t.path, t.jobs, Object.entries(t.gpu_hours).map(([m, v]) => `${v} ${m}`).join(', ') || '0',
        t.cpu_hours, t.memory_gib_hours, t.cost ? `${t.cost.amount} ${t.cost.currency}` : '—']),
      'no tenant visible to you')),
    invoices,
    section('Budgets', budgets === null ? hidden : table(
      [{label: 'Tenant'}, {label: 'Period'}, {label: 'Spent'}, {label: 'Cap'}, {label: 'GPU-hours used', num: true},
        {label: 'GPU-hour cap', num: true}],
      budgets.budgets.map((b) => [b.tenant, b.period ?? '—', b.spent ? `${b.spent.amount} ${b.spent.currency}` : '—',
        b.spend ? `${b.spend.amount} ${b.spend.currency}` : 'none', b.gpu_hours_used ?? '—', b.gpu_hours ?? 'none']),
      'no budgets set'),
    budgets?.warnings.length ? table([{label: 'When'}, {label: 'Tenant'}, {label: 'Warning'}],
      budgets.warnings.map((w) => [when(w.time), w.tenant, w.message])) : null));
}

// One org's invoice for `period` ('' org: the caller's own), or why there is none.
async function invoice(org, period, signal) {
  let inv;
  try {
    inv = await get(`/v1/invoices${q({org, period})}`, {signal});
  } catch (e) {
    if (!(e instanceof ApiError)) throw e;
    return section(`Invoice ${org || ''} ${period}`, h('p', {class: e.status === 403 ? 'hidden-note' : 'muted'},
      e.status === 403 ? 'not visible to you' : e.message));
  }
  // Micro-units as the API's amounts are written: at least cents, no trailing zeros beyond.
  const money = (micros) => `${(micros / 1e6).toFixed(6).replace(/(\.\d\d\d*?)0+$/, '$1')} ${inv.total.currency}`;
  const breakdown = (title, o) => section(title, table([{label: ''}, {label: 'Amount', num: true}],
    Object.entries(o).map(([k, v]) => [k, money(v)])));
  return section(`Invoice ${inv.org}${inv.scope ? ` (your part: ${inv.scope})` : ''} ${inv.period} — ${inv.status === 'closed' ? 'closed' : 'draft, month open'}`,
    h('p', {class: 'big', 'data-invoice': inv.org}, `${inv.total.amount} ${inv.total.currency}`),
    h('div', {class: 'grid'}, breakdown('By team', inv.by_team), breakdown('By model', inv.by_model), breakdown('By class', inv.by_class)));
}
