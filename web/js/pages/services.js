// Services: each inference service with its state, replicas running of desired, revision,
// autoscaling bounds and last decision, and its endpoints (each replica's node, port and state,
// restarts, last exit and next restart in a crash loop) as a load balancer follows them
// (GET /v1/services; docs/services.md). Below, the job and service templates the token can see
// (GET /v1/templates; docs/templates.md).
import {get} from '../api.js';
import {bar, h, section, show, table} from '../dom.js';
import {when} from '../format.js';

export async function render({main, signal}) {
  const [{services}, {templates}] = await Promise.all([get('/v1/services', {signal}), get('/v1/templates', {signal})]);
  show(main,
    h('h1', {}, 'Services'),
    section(`Services (${services.length})`, serviceTable(services)),
    services.map((s) => section(`${s.name}: endpoints`, endpointTable(s))),
    section(`Templates (${templates.length})`, templateTable(templates),
      h('p', {class: 'muted'}, 'A submit names one with template: NAME; its own fields win (docs/templates.md).')));
}

function serviceTable(services) {
  return table([{label: 'Service'}, {label: 'Tenant'}, {label: 'State'}, {label: ''}, {label: 'Running', num: true},
    {label: 'Revision', num: true}, {label: 'Autoscale'}, {label: 'Last scaled'}, {label: 'Restarts', num: true},
    {label: 'Replaced', num: true}, {label: 'Spread'}, {label: 'Created'}],
  services.map((s) => [h('span', {'data-service': s.name}, s.name), s.tenant, h('span', {class: `state-${s.state}`}, s.state),
    bar(s.running, s.desired), `${s.running} of ${s.desired}`, s.revision,
    s.autoscale ? `${s.autoscale.min_replicas}–${s.autoscale.max_replicas}, target ${s.autoscale.target}` : 'fixed',
    s.scaled ? [when(s.scaled.at), h('br'), h('span', {class: 'muted'}, s.scaled.why)] : '—',
    s.restarts, s.replaced, s.spread, when(s.created)]),
  'no service visible to you');
}

// One row per replica: where it runs and how it has fared.
function endpointTable(s) {
  return table([{label: 'Replica'}, {label: 'State'}, {label: 'Node'}, {label: 'Port', num: true}, {label: 'Revision', num: true},
    {label: 'Restarts', num: true}, {label: 'Last exit'}, {label: 'Next restart'}, {label: 'Started'}, {label: 'Why not running'}],
  s.replicas.map((r) => [h('span', {'data-replica': r.name}, r.name), h('span', {class: `state-${r.state}`}, r.state),
    r.node ?? '—', r.port ?? '—', r.current ? r.revision : `${r.revision} (old)`, r.restarts, r.last_exit ?? '—',
    when(r.next_restart), when(r.started), r.reason ?? '—']),
  'no replica');
}

function templateTable(templates) {
  return table([{label: 'Template'}, {label: 'Tenant'}, {label: 'Description'}, {label: 'Fields'}, {label: 'Saved by'}, {label: 'Saved'}],
    templates.map((t) => [h('span', {'data-template': t.name}, t.name), t.tenant, t.description || '—',
      h('code', {}, Object.keys(t.job).join(', ')), t.saved_by, when(t.saved)]),
    'no template visible to you');
}
