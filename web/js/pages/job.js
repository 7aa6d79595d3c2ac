// A job: its state and why it waits (GET /v1/jobs/{name}/explain), its tasks on nodes and GPUs,
// its events (GET /v1/events, long-polled) and each task's log, followed while it runs
// (GET /v1/jobs/{name}/logs with wait).
import {ApiError, get, getText, q} from '../api.js';
import {h, section, show, table} from '../dom.js';
import {gpuModel, when} from '../format.js';

// How far back the event stream is read for a job's history (events, not seconds).
const EVENTS_BACK = 20000;

export async function render({main, arg, query, signal, live}) {
  const tenant = query.get('tenant') ?? '';
  const base = `/v1/jobs/${encodeURIComponent(arg)}`;
  const j = await get(`${base}/explain${q({tenant})}`, {signal});
  const events = h('tbody');
  const eventsBox = h('table', {id: 'events'}, h('thead', {}, h('tr', {}, ['#', 'Time', 'Event', 'Node'].map((c) => h('th', {}, c)))), events);
  const tasks = j.placement.length ? j.placement : [{}];
  const logs = tasks.map(() => h('pre', {class: 'log'}, '…'));
  show(main,
    h('h1', {}, `Job ${j.name} `, h('span', {class: `state-${j.state}`, id: 'job-state'}, j.state)),
    h('div', {class: 'grid'},
      section('Summary', table([{label: ''}, {label: ''}], [
        ['Tenant', j.tenant], ['Kind', j.kind], ['Class', j.class ?? '—'], ['Priority', j.priority ?? '—'],
        ['Asks', Object.entries(j.demand ?? {}).filter(([, v]) => !/^0(\D|$)/.test(v)).map(([k, v]) => `${v} ${gpuModel(k) ?? k}`).join(', ')],
        ['Topology', j.topology ?? '—'], ['Submitted', when(j.submitted)], ['Started', when(j.started)],
        ['Finished', when(j.finished)], ['Preemptions', j.preemptions], ['Requeues', j.requeues ?? 0],
        ...(j.reserved_start ? [['Reserved start', when(j.reserved_start)]] : []),
        ...(j.command?.length ? [['Command', j.command.join(' ')]] : []),
        ...(j.array ? [['Array', h('span', {id: 'job-array'}, `element ${j.array.index} of ${j.array.name} (${j.array.count}, ` +
          `at most ${j.array.parallel} at once)${j.array.frame !== undefined ? `, frame ${j.array.frame}` : ''}`)]] : []),
        ...(j.retries ? [['Retries', `${j.failures} of ${j.retries} used`]] : []),
        ...(j.after ? [['Waits for', j.after.map((d) => `${d.job} (${d.state})`).join(', ')]] : []),
      ])),
      section('Why it is pending', j.state === 'pending' || j.state === 'rejected' || j.state === 'failed'
        ? h('p', {id: 'why', class: 'warn'}, j.reason ?? 'no reason recorded yet (the next pass gives one)')
        : h('p', {class: 'muted'}, `not pending: ${j.state}`))),
    section('Tasks', table([{label: 'Task', num: true}, {label: 'Node'}, {label: 'GPUs'}, {label: 'Share (GPU)', num: true}],
      j.placement.map((p, i) => [i, h('a', {href: `#/node/${encodeURIComponent(p.node)}`}, p.node),
        p.gpus ? p.gpus.join(', ') : p.mig ? `MIG ${p.mig} on ${p.gpu}` : p.mps ? `MPS ${p.mps.percent}% on ${p.gpu}` : `${p.gpu}`,
        p.share / 1000]), 'not placed')),
    section('Events', eventsBox),
    section('Logs', tasks.map((_, i) => [h('h3', {}, `Task ${i}`), logs[i]])));
  followEvents(j, events, signal, live);
  const none = j.command?.length ? '' : '; a job without a command runs simulated and writes none';
  tasks.forEach((_, i) => followLog(`${base}/logs`, tenant, i, logs[i], none, signal, live));
}

// The job's events: the recent stream (back to EVENTS_BACK events before the journal's end),
// then new ones as they come (long poll).
async function followEvents(j, into, signal, live) {
  const ready = await (await fetch('/readyz', {signal})).json();
  let since = Math.max(0, ready.journal_seq - EVENTS_BACK);
  while (live()) {
    let page;
    try {
      const caughtUp = since >= ready.journal_seq;
      page = await get(`/v1/events${q({since, wait: caughtUp ? 25 : 0})}`, {signal});
    } catch (e) {
      if (e.name === 'AbortError' || !live()) return;
      into.append(h('tr', {}, h('td', {colspan: 4, class: 'error'}, `events: ${e.message}`)));
      return;
    }
    for (const e of page.events) {
      if (e.job !== j.name || e.tenant !== j.tenant) continue;
      into.append(h('tr', {}, h('td', {}, e.seq), h('td', {}, when(e.time)), h('td', {}, e.type), h('td', {}, e.node ?? '')));
    }
    if (page.last <= since) ready.journal_seq = since;  // nothing further: wait for news
    since = Math.max(since, page.last);
  }
}

// Task `task`'s log from the start, then what is appended while the job runs.
async function followLog(path, tenant, task, into, none, signal, live) {
  let offset = 0, text = '';
  while (live()) {
    let r;
    try {
      r = await getText(`${path}${q({tenant, task, offset, wait: 20})}`, {signal});
    } catch (e) {
      if (e.name === 'AbortError' || !live()) return;
      into.textContent = e instanceof ApiError ? `no log: ${e.message}` : String(e);
      return;
    }
    text += r.text;
    offset = Number(r.headers.get('X-Allot-Log-Size') ?? offset);
    const state = r.headers.get('X-Allot-Job-State');
    const running = state === 'running' || state === 'preempting';
    into.textContent = text || `(no output${running ? ' yet' : `: the job is ${state}`}${none})`;
    if (!running && r.text === '') return;
  }
}
