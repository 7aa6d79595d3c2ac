// The login page: a token (from `allot tokens create`, or allotd's DATA/admin-token), checked
// against GET /v1/whoami before it is kept for the tab.
import {ApiError, get, session} from '../api.js';
import {h, show} from '../dom.js';

export async function render({main}) {
  session.end();
  const input = h('input', {id: 'token', type: 'password', autocomplete: 'off', placeholder: 'paste a bearer token'});
  const message = h('p', {id: 'login-message', class: 'error', role: 'alert'});
  const submit = async (event) => {
    event.preventDefault();
    const token = input.value.trim();
    if (!token) {
      message.textContent = 'Token: empty; paste the token `allot tokens create` printed.';
      return;
    }
    try {
      const me = await get('/v1/whoami', {token});
      session.start(token);
      message.textContent = '';
      location.hash = '#/queues';
      return me;
    } catch (e) {
      message.textContent = e instanceof ApiError && e.status === 401
        ? `Token refused: ${e.message}. Check it is the whole token and not revoked.`
        : `Could not check the token: ${e.message}`;
    }
  };
  show(main, h('section', {class: 'login'},
    h('h1', {}, 'Log in to allot'),
    h('form', {id: 'login', onsubmit: submit},
      h('label', {for: 'token'}, 'Token'), input,
      h('button', {type: 'submit'}, 'Log in')),
    message,
    h('p', {class: 'muted'}, 'The token stays in this tab (sessionStorage) and is sent only to this allotd. ',
      'Every page shows what the token may see.')));
  input.focus();
}
