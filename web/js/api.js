// The /v1 API with the token the login page was given (kept in sessionStorage, so it goes with
// the tab). A 401 anywhere ends the session and returns to the login page; a 403 is an ApiError
// the page shows as "not visible to you".

const KEY = 'allot.token';

export const session = {
  token: () => sessionStorage.getItem(KEY),
  start: (token) => sessionStorage.setItem(KEY, token),
  end: () => sessionStorage.removeItem(KEY),
};

export class ApiError extends Error {
  constructor(status, code, message) {
    super(message);
    this.status = status;
    this.code = code;
  }
}

// A fetch of `path` with the session's token (or `token`); the Response when it is 2xx.
async function call(path, {token = session.token(), signal} = {}) {
  const res = await fetch(path, {headers: {Authorization: `Bearer ${token}`}, signal});
  if (res.ok) return res;
  let code = String(res.status), message = res.statusText;
  try {
    const body = await res.json();
    code = body.error?.code ?? code;
    message = body.error?.message ?? message;
  } catch { /* not the API's JSON error */ }
  if (res.status === 401 && token === session.token()) {
    session.end();
    location.hash = '#/login';
  }
  throw new ApiError(res.status, code, message);
}

export async function get(path, options) {
  return (await call(path, options)).json();
}

// A text answer (task logs) with its headers.
export async function getText(path, options) {
  const res = await call(path, options);
  return {text: await res.text(), headers: res.headers};
}

// `promise`'s value, or null when the token may not see it (403, or 404 for a route that hides
// what is out of scope, when `hidden404`).
export async function visible(promise, {hidden404 = false} = {}) {
  try {
    return await promise;
  } catch (e) {
    if (e instanceof ApiError && (e.status === 403 || (hidden404 && e.status === 404))) return null;
    throw e;
  }
}

export function q(params) {
  const s = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== undefined && v !== null && v !== '') s.set(k, v);
  const text = s.toString();
  return text ? `?${text}` : '';
}
