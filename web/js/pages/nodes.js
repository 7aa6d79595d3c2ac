// Nodes: every node's condition, GPUs, free capacity and its agent's heartbeat and health
// (GET /v1/nodes), refreshed every few seconds; a node's page has its GPUs' telemetry. Below, the
// noisy-neighbour responses in force (GET /v1/interference): throttles, moves and hardenings.
import {get} from '../api.js';
import {h, section, show, table} from '../dom.js';
import {when} from '../format.js';

const REFRESH_MS = 5000;

export async function render({main, signal, live}) {
  const draw = async () => {
    const [{nodes}, {responses}] = await Promise.all([get('/v1/nodes', {signal}), get('/v1/interference', {signal})]);
    const count = (c) => nodes.filter((n) => n.condition === c).length;
    show(main,
      h('h1', {}, 'Nodes'),
      h('p', {class: 'muted'}, `${nodes.length} nodes: ${['ready', 'cordoned', 'draining', 'accepting', 'repair', 'down']
        .map((c) => `${count(c)} ${c}`).join(', ')}. Refreshed every ${REFRESH_MS / 1000} s.`),
      section('Fleet', table(
        [{label: 'Node'}, {label: 'Condition'}, {label: 'Zone'}, {label: 'Rack'}, {label: 'Pool'}, {label: 'Model'},
          {label: 'GPUs idle', num: true}, {label: 'CPU free'}, {label: 'Memory free'}, {label: 'Agent'}, {label: 'Health'}],
        nodes.map((n) => [h('a', {href: `#/node/${encodeURIComponent(n.name)}`}, n.name), condition(n.condition), n.zone, n.rack,
          n.pool, n.gpu_model ?? '—', `${n.gpus_idle} / ${n.gpus}`, `${n.cpu_free} / ${n.cpu}`, `${n.memory_free} / ${n.memory}`,
          n.agent ? (n.agent.heartbeat_age_s === null ? 'no heartbeat yet' : `heartbeat ${n.agent.heartbeat_age_s.toFixed(1)} s ago`) : 'simulated',
          health(n.agent?.health)]))),
      section('Noisy-neighbour responses', table(
        [{label: 'Node'}, {label: 'GPU', num: true}, {label: 'Action'}, {label: 'Victim'}, {label: 'Neighbour'}, {label: 'Since'}, {label: 'Why'}],
        responses.map((r) => [r.node, r.gpu, r.action + (r.hardened_to ? ` to ${r.hardened_to}` : ''), jobRef(r.victim), jobRef(r.neighbour),
          when(r.since), r.why]), 'none in force')));
  };
  await draw();
  const timer = setInterval(() => live() && draw().catch(() => {}), REFRESH_MS);
  signal.addEventListener('abort', () => clearInterval(timer));
}

function jobRef(ref) {
  if (ref.job_id === undefined) return ref.job;  // another tenant's job
  return h('a', {href: `#/job/${encodeURIComponent(ref.job)}?tenant=${encodeURIComponent(ref.tenant)}`}, `${ref.job} task ${ref.task}`);
}

export function condition(c) {
  const cls = c === 'ready' ? 'ok' : c === 'repair' || c === 'down' ? 'bad' : 'warn';
  return h('span', {class: cls}, c);
}

function health(x) {
  if (x === undefined || x === null) return '—';
  if (x === 'ok') return h('span', {class: 'ok'}, 'ok');
  return h('span', {class: 'bad'}, Array.isArray(x) ? x.join('; ') : String(x));
}
