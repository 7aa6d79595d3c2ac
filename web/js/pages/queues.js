// Queues: pending jobs with why each waits (GET /v1/jobs/{name}/explain), running jobs, the tenant
// tree with usage against guarantee and max and dominant shares, "why is my share X"
// (GET /v1/tenants/{path}/explain), each tenant's GPUs and oldest wait over time, and arrays with
// their progress (GET /v1/arrays; docs/arrays.md).
import {ApiError, get, q} from '../api.js';
import {columns, lineChart} from '../charts.js';
import {bar, h, section, show, table} from '../dom.js';
import {amount, duration, gpuModel, when} from '../format.js';

export async function render({main, signal, query}) {
  const [pending, running, {tenants}, {nodes}, history, {arrays}] = await Promise.all([
    get(`/v1/jobs${q({state: 'pending', limit: 1000})}`, {signal}),
    get(`/v1/jobs${q({state: 'running', limit: 1000})}`, {signal}),
    get('/v1/tenants', {signal}),
    get('/v1/nodes', {signal}),
    get('/v1/history', {signal}),
    get('/v1/arrays', {signal}),
  ]);
  // Why each waits, from explain (the first 50; the rest show the list's reason).
  const explained = await Promise.all(pending.jobs.map((j, i) => i < 50
    ? get(`/v1/jobs/${encodeURIComponent(j.name)}/explain${q({tenant: j.tenant})}`, {signal}) : j));
  const capacity = fleetCapacity(nodes);
  const g = columns(history.samples, (s) => s.tenants, (r) => r.tenant, (r) => r.gpus);
  const w = columns(history.samples, (s) => s.tenants, (r) => r.tenant, (r) => r.oldest_wait_s);
  const chosen = query.get('tenant') || tenants[0]?.path;

  show(main,
    h('h1', {}, 'Queues'),
    section(`Pending (${pending.jobs.length})`, table(
      [{label: 'Job'}, {label: 'Tenant'}, {label: 'Asks'}, {label: 'Waiting'}, {label: 'Why it waits'}],
      explained.map((j) => [jobLink(j), j.tenant, demand(j), duration(Date.now() - j.submitted * 1000), j.reason ?? '—']),
      'no job is waiting')),
    section(`Running (${running.jobs.length})`, table(
      [{label: 'Job'}, {label: 'Tenant'}, {label: 'Class'}, {label: 'GPUs', num: true}, {label: 'Nodes'}, {label: 'Started'}],
      running.jobs.map((j) => [jobLink(j), j.tenant, j.class ?? '—', gpusHeld(j), j.nodes.join(', '), when(j.started)]),
      'no job is running')),
    section(`Arrays (${arrays.length})`, arrayTable(arrays)),
    section('Tenants', tenantTable(tenants, capacity),
      h('p', {class: 'muted'}, 'Usage over each subtree. The bar is usage against max (or the fleet), the green mark the guarantee. ',
        'Dominant share: the largest of usage / fleet capacity over GPUs, CPU and memory.')),
    h('div', {class: 'grid'},
      section('GPUs in use over time', lineChart('GPUs by tenant', g.times, g.series, 'GPUs', {signal})),
      section('Oldest pending wait over time', lineChart('Oldest wait by tenant', w.times, w.series, 'seconds', {signal}))),
    await sharePanel(tenants, chosen, signal));
}

// One row per array: its state and progress, done of count as a bar, and the parallel limit.
function arrayTable(arrays) {
  return table([{label: 'Array'}, {label: 'Tenant'}, {label: 'State'}, {label: 'Done'}, {label: 'Done', num: true},
    {label: 'Running', num: true}, {label: 'Failed', num: true}, {label: 'Pending', num: true}, {label: 'Parallel', num: true},
    {label: 'Retried', num: true}],
  arrays.map((a) => [h('span', {'data-array': a.name}, a.name), a.tenant, h('span', {class: `state-${a.state}`}, a.state),
    bar(a.progress.done, a.count), `${a.progress.done} of ${a.count}`, a.progress.running, a.progress.failed, a.progress.pending,
    a.parallel, a.retries]),
  'no array');
}

function jobLink(j) {
  return h('a', {href: `#/job/${encodeURIComponent(j.name)}?tenant=${encodeURIComponent(j.tenant)}`}, j.name);
}

function demand(j) {
  if (!j.demand) return '—';
  return Object.entries(j.demand).filter(([, v]) => !/^0(\D|$)/.test(v)).map(([k, v]) => `${v} ${gpuModel(k) ?? k}`).join(', ');
}

// GPUs charged to the job: each task's share is in milli-GPU.
export function gpusHeld(j) {
  return j.placement.reduce((s, p) => s + (p.share ?? 0), 0) / 1000;
}

// The fleet's capacity per resource name, as /v1/tenants names them ("gpu/H100-80GB", "cpu", "memory").
function fleetCapacity(nodes) {
  const cap = {cpu: 0, memory: 0};
  for (const n of nodes) {
    if (n.gpu_model) cap[`gpu/${n.gpu_model}`] = (cap[`gpu/${n.gpu_model}`] ?? 0) + n.gpus;
    cap.cpu += amount(n.cpu) ?? 0;
    cap.memory += amount(n.memory) ?? 0;
  }
  return cap;
}

function dominant(usage, cap) {
  let best = {resource: '—', share: 0};
  for (const [r, v] of Object.entries(usage)) {
    const share = cap[r] > 0 ? (amount(v) ?? 0) / cap[r] : 0;
    if (share > best.share) best = {resource: r, share};
  }
  return best;
}

function tenantTable(tenants, cap) {
  const models = Object.keys(cap).filter((r) => gpuModel(r));
  const rows = [];
  for (const t of tenants) {
    const d = dominant(t.usage, cap);
    for (const [i, r] of models.entries()) {
      const used = amount(t.usage[r] ?? '0') ?? 0;
      const guarantee = t.guarantee[r] !== undefined ? amount(t.guarantee[r]) : undefined;
      const max = t.max[r] !== undefined ? amount(t.max[r]) : undefined;
      const name = h('span', {'data-tenant': t.path}, t.path);
      name.style.paddingLeft = `${(t.path.split('/').length - 1) * 1.2}em`;
      rows.push([i === 0 ? name : '', gpuModel(r), used, guarantee ?? '—', max ?? 'unlimited',
        bar(used, max ?? cap[r], guarantee), i === 0 ? `${(100 * d.share).toFixed(1)}% ${gpuModel(d.resource) ?? d.resource}` : '',
        i === 0 ? t.weight : '']);
    }
  }
  return table([{label: 'Tenant'}, {label: 'Model'}, {label: 'In use', num: true}, {label: 'Guarantee', num: true},
    {label: 'Max', num: true}, {label: ''}, {label: 'Dominant share'}, {label: 'Weight', num: true}], rows, 'no tenant visible to you');
}

// "Why is my share X": the tenant's explain, its summary sentences and tables.
async function sharePanel(tenants, chosen, signal) {
  const pick = h('select', {id: 'share-tenant', onchange: (e) => { location.hash = `#/queues?tenant=${encodeURIComponent(e.target.value)}`; }},
    tenants.map((t) => h('option', {value: t.path, selected: t.path === chosen}, t.path)));
  const title = 'Why is my share what it is?';
  if (!chosen) return section(title, h('p', {class: 'muted'}, 'no tenant visible to you'));
  let x;
  try {
    x = await get(`/v1/tenants/${chosen.split('/').map(encodeURIComponent).join('/')}/explain`, {signal});
  } catch (e) {
    if (!(e instanceof ApiError)) throw e;
    return section(title, pick, h('p', {class: e.status === 403 ? 'hidden-note' : 'error'},
      e.status === 403 ? 'not visible to you' : `No explanation: ${e.message}`));
  }
  const amounts = (o) => Object.entries(o ?? {}).filter(([, v]) => !/^0(\D|$)/.test(v))
    .map(([k, v]) => `${v} ${gpuModel(k) ?? k}`).join(', ') || '—';
  // A tenant the token may not read comes without its path.
  const who = (t) => t ?? h('span', {class: 'hidden-note'}, 'not visible to you');
  const parts = (list) => list.map((p) => (p.unguaranteed ? `unguaranteed capacity (${p.amount})` : [who(p.tenant), ` (${p.amount})`]))
    .flatMap((p, i) => (i ? ['; ', p] : [p]));
  const share = (s) => `${(100 * Number(s)).toFixed(1)}%`;
  return section(title, pick,
    h('p', {}, h('strong', {'data-share': x.tenant}, `${x.tenant}: dominant share ${share(x.dominant_share)}`),
      x.dominant_resource ? ` of ${x.dominant_resource}` : ' (it holds nothing)', `, weight ${x.weight}`),
    h('ul', {class: 'summary'}, x.summary.map((s) => h('li', {}, s))),
    h('div', {class: 'grid'},
      section('Shares', table([{label: 'Resource'}, {label: 'Usage', num: true}, {label: 'Guarantee', num: true},
        {label: 'Max', num: true}, {label: 'Capacity', num: true}, {label: 'Share', num: true}],
      x.shares.map((s) => [s.resource, s.usage, s.guarantee ?? '—', s.max ?? 'unlimited', s.capacity, share(s.share)]))),
      section('Siblings in the fair queue', table([{label: 'Tenant'}, {label: 'Dominant'}, {label: 'Share', num: true},
        {label: 'Usage'}, {label: 'Guarantee'}],
      x.siblings.map((s) => [s.self ? h('strong', {}, s.tenant) : who(s.tenant), s.dominant_resource ?? '—', share(s.dominant_share),
        amounts(s.usage), amounts(s.guarantee)]), 'no siblings')),
      section('Borrowed beyond its guarantee', table([{label: 'Resource'}, {label: 'Amount', num: true}, {label: 'From'}],
        x.borrowed.map((b) => [b.resource, b.amount, parts(b.from)]), 'nothing borrowed')),
      section('Its guarantee lent to others', table([{label: 'Resource'}, {label: 'Amount', num: true}, {label: 'To'}],
        x.lent.map((b) => [b.resource, b.amount, parts(b.to)]), 'nothing lent')),
      section('Reclaimed first', table([{label: 'Rank'}, {label: 'Job'}, {label: 'Holds'}, {label: 'Priority', num: true},
        {label: 'Started'}],
      x.reclaim_first.map((r) => [`${r.rank} of ${r.of} (${r.order})`, jobLink({name: r.job, tenant: r.tenant}), amounts(r.resources), r.priority, when(r.started)]),
      'nothing of it would be reclaimed: no burstable job runs'))));
}
