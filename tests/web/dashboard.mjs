// Drives Debian's chromium (playwright-core, never a downloaded browser) through the dashboard
// of a real allotd, as tests/web/dashboard_test.cc sets it up:
//
//   node tests/web/dashboard.mjs CONFIG.json
//
// CONFIG: {url, admin_token, member_token, screenshots (a directory), expect: {allocated,
// free, nodes, running: [jobs], pending: {job, tenant, reason}, hidden_job, hidden_tenant, member_tenant,
// telemetry_node, array: {name, progress}, service: {name, running, state, replicas, reason, template,
// hidden}}}. Every page must load with no console error, no uncaught exception, no failed
// request and no HTTP error but those a step expects; each step's numbers must be the ones
// given. Exits 1 naming every failure; a screenshot of each page is left in `screenshots`.
import {readFileSync, mkdirSync} from 'node:fs';
import {chromium} from 'playwright-core';

const config = JSON.parse(readFileSync(process.argv[2], 'utf8'));
const {url, expect} = config;
mkdirSync(config.screenshots, {recursive: true});

const failures = [];
const fail = (what) => { failures.push(what); console.log(`FAIL ${what}`); };
const check = (ok, what) => (ok ? console.log(`ok   ${what}`) : fail(what));

const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM ?? '/usr/bin/chromium', headless: true,
  args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
    '--disable-background-networking', '--disable-component-update', '--disable-sync'],
});
const context = await browser.newContext({viewport: {width: 1400, height: 1000}});
const page = await context.newPage();
page.setDefaultTimeout(15000);

// What went wrong in the browser during the current step; `allowed` lists the HTTP errors a
// step expects (by status and a part of the URL).
let problems = [];
let allowed = [];
const expected = (status, u) => allowed.some((a) => a.status === status && u.includes(a.url));
page.on('console', (m) => {
  if (m.type() !== 'error') return;
  const where = m.location()?.url ?? '';
  // Chromium reports each HTTP error as a console error too; those are judged by status below.
  if (/Failed to load resource: the server responded with a status of (\d+)/.test(m.text())) return;
  problems.push(`console error: ${m.text()} (${where})`);
});
page.on('pageerror', (e) => problems.push(`uncaught: ${e.message}`));
page.on('requestfailed', (r) => {
  // A long poll (events, logs) is cancelled when its page is left, and a page's reads when a
  // 401 sends it to the login page: by design.
  if (r.failure()?.errorText === 'net::ERR_ABORTED' && (r.url().includes('wait=') || expected('aborted', r.url()))) return;
  problems.push(`request failed: ${r.url()} ${r.failure()?.errorText}`);
});
page.on('response', (r) => {
  if (r.status() >= 400 && !expected(r.status(), r.url())) problems.push(`HTTP ${r.status()} ${r.url()}`);
});

// One step: `fn` runs, then whatever went wrong in the browser fails it by name.
async function step(name, fn, {allow = []} = {}) {
  problems = [];
  allowed = allow;
  try {
    await fn();
  } catch (e) {
    fail(`${name}: ${e.message.split('\n')[0]}`);
  }
  await page.waitForTimeout(200);  // late console messages
  for (const p of problems) fail(`${name}: ${p}`);
}

async function open(hash, ready) {
  await page.goto(`${url}/${hash}`);
  await page.waitForSelector(ready);
  await page.waitForLoadState('networkidle').catch(() => {});  // long polls keep it busy: fine
}

const shot = (name) => page.screenshot({path: `${config.screenshots}/${name}.png`, fullPage: true});
const text = (sel) => page.locator(sel).first().innerText();
const body = () => page.locator('main').innerText();

async function login(token) {
  await open('#/login', '#token');
  await page.fill('#token', token);
  await page.click('#login button[type=submit]');
}

await step('a bad token is refused with a clear message', async () => {
  await login('not-a-token');
  await page.waitForFunction(() => document.querySelector('#login-message')?.textContent.includes('Token refused'));
  check((await text('#login-message')).includes('the bearer token is not known or was revoked'), 'login names why the token was refused');
  check(page.url().endsWith('#/login'), 'a refused token stays on the login page');
  await shot('login-refused');
}, {allow: [{status: 401, url: '/v1/whoami'}]});

await step('the admin logs in', async () => {
  await login(config.admin_token);
  await page.waitForFunction(() => location.hash.startsWith('#/queues'));
  await page.waitForFunction(() => document.querySelector('#who').textContent.includes('platform-admin'));
  check((await text('#who')).startsWith('admin · platform-admin'), 'the header shows the principal and role');
});

await step('Availability', async () => {
  await open('#/availability', '[data-free]');
  check(Number(await text(`[data-free="${expect.model}"]`)) === expect.free, `free ${expect.model} GPUs now: ${expect.free}`);
  const chart = page.locator('[data-chart="GPUs allocated and idle"] canvas');
  check(await chart.count() === 1, 'the allocation chart is drawn (uPlot)');
  check(await page.locator('[data-chart^="H100-80GB: next 7 days"] canvas').count() === 1, 'the reservation calendar is drawn');
  await page.fill('#ask input[name=gpus]', '4');
  await page.click('#ask button');
  await page.waitForSelector('[data-earliest]');
  check((await text('[data-earliest]')).includes('Z ('), 'the earliest start is an RFC 3339 time with its distance from now');
  await page.fill('#ask input[name=duration]', 'soon');
  await page.click('#ask button');
  await page.waitForFunction(() => document.querySelector('#earliest .error')?.textContent.includes('duration'));
  check((await text('#earliest .error')).includes("duration: 'soon' is not valid"), 'a bad duration is refused naming the field and value');
  await page.fill('#ask input[name=duration]', '4h');
  await page.click('#ask button');
  await page.waitForSelector('[data-earliest]');
  await shot('availability');
}, {allow: [{status: 400, url: 'duration=soon'}]});

await step('Queues', async () => {
  await open('#/queues', '[data-share]');
  const main = await body();
  for (const j of expect.running) check(main.includes(j), `running job ${j} listed`);
  check(main.includes(expect.pending.job) && main.includes(expect.pending.reason), `pending ${expect.pending.job} with why it waits`);
  const gpus = await page.$$eval('section:has(h2:text-matches("^Running")) tbody tr td:nth-child(4)', (tds) => tds.reduce((s, td) => s + Number(td.textContent), 0));
  check(gpus === expect.allocated, `running jobs hold ${expect.allocated} GPUs (page: ${gpus})`);
  check(await page.locator('[data-chart="GPUs by tenant"] canvas').count() === 1, 'GPUs by tenant over time is drawn');
  check(await page.locator('ul.summary li').count() > 0, 'why-is-my-share: the summary sentences are shown');
  const array = page.locator(`tr:has([data-array="${expect.array.name}"])`);
  check(await array.count() === 1, `array ${expect.array.name} listed with its progress`);
  check((await array.first().innerText()).includes(expect.array.progress), `array ${expect.array.name}: ${expect.array.progress} done`);
  await shot('queues');
});

await step('a job, pending', async () => {
  await open(`#/job/${expect.pending.job}?tenant=${encodeURIComponent(expect.pending.tenant)}`, '#why');
  check((await text('#why')).includes(expect.pending.reason), 'the job page says why it is pending');
  await page.waitForSelector('#events tbody tr');
  check((await page.locator('#events tbody').innerText()).includes('JobSubmitted'), 'its events include its submission');
  await shot('job-pending');
});

await step('a job, running', async () => {
  const j = expect.running[0];
  await open(`#/job/${j}?tenant=${encodeURIComponent(expect.member_tenant)}`, '#job-state');
  check((await text('#job-state')) === 'running', `${j} is running`);
  await page.waitForSelector('#events tbody tr');
  check((await page.locator('#events tbody').innerText()).includes('JobPlaced'), 'its events include its placement');
  await shot('job-running');
});

await step('Services', async () => {
  const s = expect.service;
  await open('#/services', `[data-service="${s.name}"]`);
  const row = (await page.locator(`tr:has([data-service="${s.name}"])`).first().innerText());
  check(row.includes(s.running) && row.includes(s.state), `service ${s.name}: ${s.running} running, ${s.state} (row: ${row})`);
  const replicas = page.locator(`section:has(h2:text-is("${s.name}: endpoints")) tbody tr`);
  check(await replicas.count() === s.replicas, `${s.name}'s endpoints list its ${s.replicas} replicas`);
  check((await replicas.first().innerText()).includes(s.reason), `a replica says why it is not running (${s.reason})`);
  check(await page.locator(`[data-template="${s.template}"]`).count() === 1, `template ${s.template} listed`);
  check((await body()).includes(s.hidden), `the admin sees the other tenant's service ${s.hidden}`);
  await shot('services');
});

await step('Nodes', async () => {
  await open('#/nodes', 'section table');
  check(await page.locator('section table tbody tr').count() === expect.nodes, `${expect.nodes} nodes listed`);
  await shot('nodes');
  await open(`#/node/${expect.telemetry_node}`, 'h1');
  await page.waitForFunction(() => document.querySelector('main').innerText.includes('41 %'));
  check((await body()).includes('nvml.ecc'), 'the node shows its health checks');
  check((await body()).includes('partial: no cpu limit, no pids limit'), 'the node shows what its confinement lacks');
  await shot('node');
});

await step('Spend', async () => {
  await open('#/spend', '[data-invoice]');
  check((await text('[data-invoice]')).endsWith('USD'), 'an invoice total in the card currency');
  check((await body()).includes(expect.budget_tenant), 'the budget is listed');
  await shot('spend');
});

await step('a 401 anywhere returns to the login page', async () => {
  await page.evaluate(() => sessionStorage.setItem('allot.token', 'revoked-or-wrong'));
  await page.goto(`${url}/#/nodes`);
  await page.waitForFunction(() => location.hash === '#/login');
  check(true, 'back at the login page');
}, {allow: [{status: 401, url: '/v1/'}, {status: 'aborted', url: '/v1/'}]});

await step('a member sees only its subtree', async () => {
  await login(config.member_token);
  await page.waitForFunction(() => document.querySelector('#who').textContent.includes('member'));
  await open('#/queues', '[data-share]');
  const main = await body();
  check(!main.includes(expect.hidden_job), `another tenant's job (${expect.hidden_job}) is absent`);
  check(main.includes(expect.running[0]), `its own job (${expect.running[0]}) is shown`);
  const tenants = await page.$$eval('[data-tenant]', (els) => els.map((e) => e.dataset.tenant));
  check(tenants.length > 0 && tenants.every((t) => t === expect.member_tenant || t.startsWith(`${expect.member_tenant}/`)),
    `the tenant table holds only ${expect.member_tenant}'s subtree (${tenants.join(', ')})`);
  const series = await page.$$eval('[data-chart="GPUs by tenant"] .u-legend .u-label', (els) => els.map((e) => e.textContent));
  check(series.includes(expect.member_tenant) && series.every((t) => t === 'Time' || t.startsWith(expect.member_tenant)),
    `the history chart's series are only ${expect.member_tenant}'s (${series.join(', ')})`);
  await shot('queues-member');
  await open(`#/job/${expect.hidden_job}?tenant=${encodeURIComponent(expect.hidden_tenant)}`, 'h2.error');
  check((await body()).includes('does not exist'), `${expect.hidden_job}'s page says it does not exist, as for a missing job`);
  await open('#/spend', 'h1');
  await page.waitForSelector('main section');
  await shot('spend-member');
  await open('#/services', `[data-service="${expect.service.name}"]`);
  check(!(await body()).includes(expect.service.hidden), `another tenant's service (${expect.service.hidden}) is absent`);
  await shot('services-member');
  await open('#/availability', '[data-free]');
  await open('#/nodes', 'section table');
}, {allow: [{status: 404, url: `/v1/jobs/${expect.hidden_job}/`}]});

await step('a job page follows its events as they come', async () => {
  const {job, tenant} = expect.pending;
  await open(`#/job/${job}?tenant=${encodeURIComponent(tenant)}`, '#why');
  await page.waitForSelector('#events tbody tr');
  // Cancelled behind the page's back (as the admin, from here): the long poll brings the event.
  const res = await fetch(`${url}/v1/jobs/${job}/cancel?tenant=${encodeURIComponent(tenant)}`,
    {method: 'POST', headers: {Authorization: `Bearer ${config.admin_token}`}});
  check(res.status === 200, `${job} cancelled through the API (${res.status})`);
  await page.waitForFunction(() => document.querySelector('#events tbody').innerText.includes('JobCancelled'));
  check(true, 'the JobCancelled event appeared without a reload');
});

await step('logging out returns to the login page and forgets the token', async () => {
  await page.click('#logout');
  await page.waitForFunction(() => location.hash === '#/login');
  check(await page.evaluate(() => sessionStorage.getItem('allot.token')) === null, 'the token is gone from sessionStorage');
}, {allow: [{status: 'aborted', url: '/v1/'}]});

await browser.close();
if (failures.length) {
  console.log(`\n${failures.length} failure(s)`);
  process.exit(1);
}
console.log('\nevery check passed');
