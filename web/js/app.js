// The dashboard's shell: hash routes to pages, the login state in the header, and each page's
// cleanup (timers, long polls) when another is shown.
import {ApiError, get, session} from './api.js';
import {h, show} from './dom.js';
import * as login from './pages/login.js';
import * as availability from './pages/availability.js';
import * as queues from './pages/queues.js';
import * as job from './pages/job.js';
import * as nodes from './pages/nodes.js';
import * as node from './pages/node.js';
import * as services from './pages/services.js';
import * as spend from './pages/spend.js';

// #/NAME[/ARG][?query] → the page and its arguments.
const pages = {login, availability, queues, job, services, nodes, node, spend};

const main = document.getElementById('main');
let cleanup = null;
let generation = 0;

// What a page's render gets: where to draw, its argument and query, a signal aborted when the
// page goes away, and `live()` to know it is still shown.
async function route() {
  if (cleanup) cleanup.abort();
  cleanup = new AbortController();
  const mine = ++generation;
  const [path, query = ''] = location.hash.replace(/^#\/?/, '').split('?');
  const [name, ...rest] = path.split('/');
  const page = pages[name] ? name : 'availability';
  if (!session.token() && page !== 'login') {
    location.hash = '#/login';
    return;
  }
  await header(page);
  const ctx = {
    main, arg: rest.map(decodeURIComponent).join('/'), query: new URLSearchParams(query), signal: cleanup.signal,
    live: () => mine === generation,
  };
  try {
    await pages[page].render(ctx);
  } catch (e) {
    if (e.name === 'AbortError' || !ctx.live()) return;
    if (e instanceof ApiError && e.status === 401) return;  // back to the login page
    show(main, h('section', {}, h('h2', {class: 'error'}, 'Could not load this page'), h('p', {class: 'error'}, e.message)));
  }
}

// The header: the navigation and who is logged in, once per session.
let shownFor = null;
async function header(page) {
  for (const a of document.querySelectorAll('#nav a')) a.classList.toggle('active', a.getAttribute('href') === `#/${page}`);
  const token = session.token();
  const signedIn = Boolean(token) && page !== 'login';
  document.getElementById('nav').hidden = !signedIn;
  document.getElementById('logout').hidden = !signedIn;
  if (!signedIn) {
    document.getElementById('who').textContent = '';
    shownFor = null;
    return;
  }
  if (shownFor === token) return;
  shownFor = token;
  try {
    const me = await get('/v1/whoami');
    document.getElementById('who').textContent = `${me.principal} · ${me.role} · ${me.scope || 'whole fleet'}`;
  } catch { shownFor = null; }
}

document.getElementById('logout').addEventListener('click', () => {
  session.end();
  location.hash = '#/login';
});
window.addEventListener('hashchange', route);
route();
