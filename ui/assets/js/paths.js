// The UI's own URLs, in one place.

const e = encodeURIComponent;

function ns(namespace) {
  return namespace && namespace !== 'default' ? '?namespace=' + e(namespace) : '';
}

export const jobURL = (id, namespace) => `/ui/jobs/${e(id)}${ns(namespace)}`;
export const allocURL = id => `/ui/allocations/${e(id)}`;
export const nodeURL = id => `/ui/clients/${e(id)}`;
export const evalURL = id => `/ui/evaluations/${e(id)}`;
export const serviceURL = (name, namespace) => `/ui/services/${e(name)}${ns(namespace)}`;
// A variable's path keeps its slashes: each of its segments is escaped.
export const varURL = (path, namespace) => `/ui/variables/var/${path.split('/').map(e).join('/')}${ns(namespace)}`;

// namespace is the page's ?namespace=, "default" without one.
export function namespace() {
  return new URLSearchParams(location.search).get('namespace') || 'default';
}

// api builds a /v1 path from segments (escaped) and query parameters
// (empty values left out).
export function api(segments, query = {}) {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(query)) if (v !== undefined && v !== null && v !== '') q.set(k, v);
  const s = q.toString();
  return '/v1/' + segments.map(e).join('/') + (s ? '?' + s : '');
}
