// Availability: free GPUs now per model, zone and rack; the earliest start of "N GPUs of model M
// for D"; the reservation calendar; the fleet's allocation over time.
// Reads /v1/nodes, /v1/availability, /v1/calendar, /v1/reservations, /v1/history.
import {ApiError, get, q, visible} from '../api.js';
import {columns, lineChart} from '../charts.js';
import {h, section, show, table} from '../dom.js';
import {when} from '../format.js';

export async function render({main, signal}) {
  const [{nodes}, history, reservations] = await Promise.all([
    get('/v1/nodes', {signal}),
    get('/v1/history', {signal}),
    visible(get('/v1/reservations', {signal})),
  ]);
  const models = [...new Set(nodes.filter((n) => n.gpu_model).map((n) => n.gpu_model))].sort();
  const free = await Promise.all(models.map((m) => get(`/v1/availability${q({model: m, gpus: 1})}`, {signal})));

  const total = (m) => nodes.filter((n) => n.gpu_model === m).reduce((s, n) => s + n.gpus, 0);
  const byModel = table(
    [{label: 'Model'}, {label: 'Free now', num: true}, {label: 'GPUs', num: true}, {label: 'Idle nodes', num: true}],
    free.map((a) => [a.model, h('span', {'data-free': a.model}, a.free_now.gpus), total(a.model), a.free_now.idle_nodes]));
  const places = (kind) => table([{label: 'Model'}, {label: kind}, {label: 'Free now', num: true}],
    free.flatMap((a) => Object.entries(a.free_now[kind === 'Zone' ? 'zones' : 'racks']).map(([p, n]) => [a.model, p, n])));

  const { times, series } = columns(history.samples, (s) => s.fleet, (r) => r.model, (r) => r.allocated);
  const idle = columns(history.samples, (s) => s.fleet, (r) => r.model, (r) => r.idle);
  const chart = lineChart('GPUs allocated and idle', times,
    [...series.map((s) => ({...s, label: `${s.label} allocated`})), ...idle.series.map((s) => ({...s, label: `${s.label} idle`}))],
    'GPUs', {signal});

  show(main,
    h('h1', {}, 'Availability'),
    h('div', {class: 'grid'},
      section('Free GPUs now, by model', byModel,
        h('p', {class: 'muted'}, 'Whole GPUs on ready nodes, not held by jobs nor booked by a reservation now.')),
      section('By zone', places('Zone')),
      section('By rack', places('Rack'))),
    earliestStartForm(models, signal),
    section('Allocation over time', chart),
    await calendar(models, signal),
    section('Reservations', reservations === null ? h('p', {class: 'hidden-note'}, 'not visible to you')
      : table([{label: 'Name'}, {label: 'Tenant'}, {label: 'Model'}, {label: 'State'}, {label: 'Windows'}],
        reservations.reservations.map((r) => [r.name, r.tenant, r.model, r.state,
          r.windows.map((w) => `${when(w.start)} → ${when(w.end)}, ${w.holds.reduce((s, x) => s + x.gpus, 0)} GPUs`).join('; ')]),
        'no reservations')));
}

// "N GPUs of model M for D": GET /v1/availability's earliest start and what it waits for.
function earliestStartForm(models, signal) {
  const out = h('div', {id: 'earliest'});
  const model = h('select', {name: 'model'}, models.map((m) => h('option', {value: m}, m)));
  const gpus = h('input', {name: 'gpus', type: 'number', min: 1, value: 8, size: 4});
  const duration = h('input', {name: 'duration', value: '4h', size: 6});
  const tenant = h('input', {name: 'tenant', placeholder: 'optional: count its queue', size: 18});
  const ask = async (event) => {
    event.preventDefault();
    try {
      const a = await get(`/v1/availability${q({model: model.value, gpus: gpus.value, duration: duration.value, tenant: tenant.value})}`, {signal});
      show(out,
        a.earliest_start
          ? h('p', {}, `${a.free_now.gpus >= Number(gpus.value) ? 'Fits now' : 'Earliest start'}: `, h('strong', {'data-earliest': a.earliest_start}, when(a.earliest_start)))
          : h('p', {class: 'warn'}, `No start found: ${a.why}`),
        a.waited_for?.length ? table([{label: 'Waits for'}, {label: 'Name'}, {label: 'Tenant'}, {label: 'Ends'}],
          a.waited_for.map((w) => [w.kind, w.name ?? '(not visible to you)', w.tenant ?? '', when(w.ends)])) : null,
        a.not_offered ? h('p', {class: 'warn', 'data-not-offered': ''}, `Not offered: ${a.not_offered}.`) : null,
        h('p', {class: 'muted'}, `Considers: ${a.considers.join('; ')}.`, a.not_considered ? ` Not considered: ${a.not_considered}.` : ''));
    } catch (e) {
      if (!(e instanceof ApiError)) throw e;
      show(out, h('p', {class: 'error'}, e.message));
    }
  };
  return section('When can I get…',
    h('form', {class: 'inline', id: 'ask', onsubmit: ask},
      h('label', {}, 'GPUs', gpus), h('label', {}, 'Model', model), h('label', {}, 'For', duration),
      h('label', {}, 'Tenant', tenant), h('button', {type: 'submit'}, 'Earliest start')),
    out);
}

// The next 7 days per model, hourly: free, reserved and in use (GET /v1/calendar).
async function calendar(models, signal) {
  const charts = await Promise.all(models.map(async (m) => {
    const c = await get(`/v1/calendar${q({model: m, step: '1h'})}`, {signal});
    const times = c.steps.map((s) => Date.parse(s.start) / 1000);
    return lineChart(`${m}: next 7 days (of ${c.capacity} GPUs)`, times, ['free', 'reserved', 'in_use'].map((k) => (
      {label: k.replace('_', ' '), values: c.steps.map((s) => s[k])})), 'GPUs', {signal});
  }));
  return section('Reservation calendar', charts.length ? charts : h('p', {class: 'muted'}, 'no GPU models in the fleet'));
}
