// The HTTP API, as the CLI reads it: the same /v1 endpoints, blocking
// queries (?index= with X-Nomad-Index) for live updates, and the ACL token
// the user entered sent as X-Nomad-Token.

const tokenKey = 'drover.acl.token';

// token is the ACL secret ID the user saved, or "".
export function token() {
  try {
    return localStorage.getItem(tokenKey) || '';
  } catch {
    return '';
  }
}

// setToken saves (or, with "", forgets) the ACL secret ID.
export function setToken(secret) {
  if (secret) localStorage.setItem(tokenKey, secret);
  else localStorage.removeItem(tokenKey);
}

// APIError is an answer other than 2xx: status is its HTTP status and the
// message the agent's plain-text explanation.
export class APIError extends Error {
  constructor(status, message, path) {
    super(message);
    this.name = 'APIError';
    this.status = status;
    this.path = path;
  }
}

// notAvailable reports whether err says the agent has no such endpoint
// (a feature this agent does not offer, not a failure).
export function notAvailable(err) {
  return err instanceof APIError && (err.status === 404 || err.status === 501) &&
    /no such endpoint|not implemented|not supported|not enabled/i.test(err.message);
}

// notFound reports whether err is a 404 for an object (a job, an
// allocation) rather than for the endpoint.
export function notFound(err) {
  return err instanceof APIError && err.status === 404 && !notAvailable(err);
}

// forbidden reports whether err is an ACL refusal.
export function forbidden(err) {
  return err instanceof APIError && err.status === 403;
}

// describe turns an error into a sentence for the page.
export function describe(err) {
  if (forbidden(err)) {
    const why = /permission denied/i.test(err.message) ? 'Permission denied' : `Permission denied: ${err.message}`;
    return `${why} (${err.path}): sign in with an ACL token that may read it.`;
  }
  if (err instanceof APIError) return `${err.path}: ${err.status} ${err.message}`;
  return String(err && err.message || err);
}

// headers are the request headers: the token when there is one.
export function headers() {
  const out = {};
  const t = token();
  if (t) out['X-Nomad-Token'] = t;
  return out;
}

// get reads path (a /v1 path with its query); with index it blocks until
// the data's index passes it or wait elapses. It returns {data, index}.
export async function get(path, {signal, index = 0, wait = '60s'} = {}) {
  const url = new URL(path, location.origin);
  if (index > 0) {
    url.searchParams.set('index', String(index));
    url.searchParams.set('wait', wait);
  }
  const resp = await fetch(url, {headers: headers(), signal, cache: 'no-store'});
  if (!resp.ok) {
    const text = (await resp.text()).trim();
    throw new APIError(resp.status, text || resp.statusText, path);
  }
  const data = await resp.json();
  return {data, index: Number(resp.headers.get('X-Nomad-Index') || 0)};
}

// put writes body (as JSON) to path and returns {data} (null for an empty
// answer).
export async function put(path, body) {
  const resp = await fetch(new URL(path, location.origin), {
    method: 'PUT', headers: {...headers(), 'Content-Type': 'application/json'}, body: JSON.stringify(body), cache: 'no-store',
  });
  if (!resp.ok) {
    const text = (await resp.text()).trim();
    throw new APIError(resp.status, text || resp.statusText, path);
  }
  const text = await resp.text();
  return {data: text ? JSON.parse(text) : null};
}

// status tells the page footer whether updates flow: it dispatches
// "change" with detail {ok, retryIn, error}.
export const status = new EventTarget();

function report(detail) {
  status.dispatchEvent(new CustomEvent('change', {detail}));
}

// backoff is the wait after the nth failure in a row: 1s, 2s, 4s ... 30s,
// with a fifth of jitter so that many pages do not retry in step.
export function backoff(n) {
  const base = Math.min(30000, 1000 * 2 ** Math.max(0, n - 1));
  return Math.round(base * (0.9 + Math.random() * 0.2));
}

// sleep resolves after ms, or at once when signal aborts.
export function sleep(ms, signal) {
  return new Promise(resolve => {
    if (signal && signal.aborted) return resolve();
    const t = setTimeout(done, ms);
    function done() {
      clearTimeout(t);
      if (signal) signal.removeEventListener('abort', done);
      resolve();
    }
    if (signal) signal.addEventListener('abort', done, {once: true});
  });
}

// A hidden tab holds no long poll: the browser opens at most six
// connections to the agent, shared by all its tabs. hidden aborts the
// requests in flight when the tab is hidden; whenVisible waits for its
// return.
let hidden = new AbortController();
document.addEventListener('visibilitychange', () => {
  if (document.hidden) {
    hidden.abort();
    hidden = new AbortController();
  }
});

function whenVisible(signal) {
  return new Promise(resolve => {
    if (!document.hidden || signal.aborted) return resolve();
    const done = () => {
      if (document.hidden && !signal.aborted) return;
      document.removeEventListener('visibilitychange', done);
      signal.removeEventListener('abort', done);
      resolve();
    };
    document.addEventListener('visibilitychange', done);
    signal.addEventListener('abort', done, {once: true});
  });
}

// watch calls onData with path's data now and again each time it changes,
// with blocking queries, until signal aborts. onError(err) is told of
// each failure; when it returns true the watch ends (the object is gone,
// the endpoint does not exist), otherwise it retries with backoff. Without
// blocking (endpoints that do not block), it polls every period ms. quiet
// keeps its failures out of the footer (a sample that may be missing).
// While the tab is hidden it pauses, and it catches up when the tab shows.
export async function watch(path, onData, {signal, onError, blocking = true, period = 10000, quiet = false} = {}) {
  let index = 0;
  let failures = 0;
  while (!signal.aborted) {
    await whenVisible(signal);
    if (signal.aborted) return;
    const req = AbortSignal.any([signal, hidden.signal]);
    let r;
    try {
      r = await get(path, {signal: req, index: blocking ? index : 0});
    } catch (err) {
      if (signal.aborted) return;
      if (req.aborted) continue; // the tab was hidden: wait for it
      failures++;
      if (onError && onError(err) === true) return;
      const wait = backoff(failures);
      if (!quiet) report({ok: false, retryIn: wait, error: describe(err)});
      await sleep(wait, signal);
      continue;
    }
    if (signal.aborted) return;
    if (!quiet && (failures > 0 || index === 0)) report({ok: true});
    failures = 0;
    // An index that went back (a restored snapshot, another server)
    // starts over; the same index means the wait ended with no change.
    // onData's own errors are bugs: they end the watch and reach the
    // console rather than being retried as if the agent had failed.
    if (!blocking || r.index !== index || index === 0) onData(r.data, r.index);
    index = r.index;
    // An endpoint that reports no index cannot block: poll it.
    if (!blocking || index === 0) await sleep(period, signal);
  }
}
