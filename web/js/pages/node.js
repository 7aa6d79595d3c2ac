// A node: condition and repair state, its GPUs with live telemetry from its agent's heartbeats,
// the newest health checks, labels and the jobs on it the token may see (GET /v1/nodes/{name}).
import {get} from '../api.js';
import {h, section, show, table} from '../dom.js';
import {when} from '../format.js';
import {condition} from './nodes.js';

const REFRESH_MS = 3000;

const REPAIR = {
  repair: 'In repair: a hardware check failed and its jobs were requeued. It leaves repair only by a passing check an operator asks for (allot nodes check NODE).',
  down: 'Lost: its agent stopped heartbeating; its jobs were requeued. It returns when the agent registers again.',
  accepting: 'Accepting: its agent is running the acceptance checks before it takes work.',
  draining: 'Draining: its jobs run to their end; no new work is placed.',
  cordoned: 'Cordoned: no new work is placed.',
};

export async function render({main, arg, signal, live}) {
  const draw = async () => {
    const n = await get(`/v1/nodes/${encodeURIComponent(arg)}`, {signal});
    const a = n.agent;
    show(main,
      h('h1', {}, `Node ${n.name} `, condition(n.condition)),
      REPAIR[n.condition] ? h('p', {class: 'warn', id: 'repair'}, REPAIR[n.condition]) : null,
      h('div', {class: 'grid'},
        section('Node', table([{label: ''}, {label: ''}], [
          ['Pool', n.pool], ['GPUs', `${n.gpus_idle} idle of ${n.gpus} ${n.gpu_model ?? ''}`], ['CPU', n.cpu], ['Memory', n.memory],
          ['Managed by', n.agent_managed ? 'an agent' : 'the simulator'],
          ['Labels', Object.entries(n.labels).map(([k, v]) => `${k}=${v}`).join(', ') || '—'],
          ['Jobs (visible to you)', n.jobs.length ? n.jobs.join(', ') : 'none'],
          ...(a ? [['Agent', [a.agent_version && `version ${a.agent_version}`, a.address && `at ${a.address}`, a.driver_version && `driver ${a.driver_version}`].filter(Boolean).join(', ') || '—'],
            ['Last heartbeat', a.heartbeat_age_s === null ? 'none yet' : `${a.heartbeat_age_s.toFixed(1)} s ago`],
            ['Checks requested', a.checks_requested],
            ...(a.isolation ? [['Isolation', a.isolation.complete
              ? h('span', {class: 'ok'}, 'complete: sandbox, tenant uids, device cgroup, cpu, memory and pids limits')
              : h('span', {class: 'bad'}, `partial: no ${a.isolation.gaps.join(', no ')}`)]] : [])] : []),
        ])),
        section('Health checks', !a?.health ? h('p', {class: 'muted'}, a ? 'no health report yet' : 'a simulated node has no agent')
          : [h('p', {class: a.health.ok ? 'ok' : 'bad'}, `${a.health.ok ? 'passing' : 'failing'}; `,
            `${a.health.acceptance ? 'acceptance' : 'routine'} check ${a.health.check}${a.health.at ? ` at ${when(a.health.at)}` : ''}`),
          table([{label: 'Check'}, {label: 'Result'}, {label: 'Severity'}, {label: 'Detail'}],
            a.health.checks.map((c) => [c.name, h('span', {class: c.ok ? 'ok' : 'bad'}, c.ok ? 'ok' : 'failed'), c.severity, c.detail]))])),
      section('GPUs (live telemetry)', !a ? h('p', {class: 'muted'}, 'a simulated node reports no telemetry')
        : table([{label: 'GPU', num: true}, {label: 'UUID'}, {label: 'Utilisation', num: true}, {label: 'Memory used', num: true},
          {label: 'Temperature', num: true}, {label: 'Power', num: true}, {label: 'ECC corr. / uncorr.', num: true}, {label: 'Xids'}],
        a.gpus.map((g) => [g.index, g.uuid, pct(g.utilization_percent), mib(g.memory_used_mib), unit(g.temperature_c, '°C'),
          g.power_mw === undefined ? '—' : `${(g.power_mw / 1000).toFixed(0)} W`,
          `${g.ecc_corrected ?? '—'} / ${g.ecc_uncorrected ?? '—'}`, g.xids.length ? g.xids.join(', ') : 'none']),
        'no GPU telemetry yet')),
      a ? section('Tasks (visible to you)', table([{label: 'Job'}, {label: 'Task', num: true}, {label: 'Run', num: true},
        {label: 'PID', num: true}, {label: 'State'}], a.tasks.map((t) => [t.job, t.task, t.run, t.pid, t.exited ? `exited: ${t.reason}` : 'running']),
      'none')) : null);
  };
  await draw();
  const timer = setInterval(() => live() && draw().catch(() => {}), REFRESH_MS);
  signal.addEventListener('abort', () => clearInterval(timer));
}

const unit = (v, u) => (v === undefined ? '—' : `${v} ${u}`);
const pct = (v) => unit(v, '%');
const mib = (v) => (v === undefined ? '—' : `${(v / 1024).toFixed(1)} GiB`);
