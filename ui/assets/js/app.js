// The UI's shell: it routes /ui/<page>/... to a page module, keeps the
// navigation and the footer current, and aborts a page's live updates when
// the user leaves it.

import {h, replace, message} from './dom.js';
import {refreshTimes} from './format.js';
import {get, status, token} from './api.js';
import * as jobs from './pages/jobs.js';
import * as job from './pages/job.js';
import * as alloc from './pages/alloc.js';
import * as nodes from './pages/nodes.js';
import * as node from './pages/node.js';
import * as evals from './pages/evals.js';
import * as deployments from './pages/deployments.js';
import * as servers from './pages/servers.js';
import * as services from './pages/services.js';
import * as variables from './pages/variables.js';
import * as tokens from './pages/tokens.js';

// routes: the first segment after /ui/ picks the page; the page gets the
// rest, unescaped.
const routes = {
  'jobs': p => p.length ? job.render(p[0]) : jobs.render(),
  'allocations': p => p.length ? alloc.render(p[0]) : null,
  'clients': p => p.length ? node.render(p[0]) : nodes.render(),
  'nodes': p => p.length ? node.render(p[0]) : nodes.render(),
  'evaluations': p => evals.render(p[0]),
  'deployments': () => deployments.render(),
  'servers': () => servers.render(),
  'variables': p => p.length === 0 ? variables.render() : (p[0] === 'var' && p.length > 1 ? variables.render(p.slice(1).join('/')) : null),
  'services': p => services.render(p[0]),
  'settings': p => p[0] === 'tokens' ? tokens.render() : null,
};

let current = null; // the page on screen: {abort: AbortController}

function segments(pathname) {
  const rest = pathname.replace(/^\/ui\/?/, '');
  return rest.split('/').filter(s => s !== '').map(s => {
    try {
      return decodeURIComponent(s);
    } catch {
      return s;
    }
  });
}

// show renders the page for the current location.
function show() {
  if (current) current.abort();
  const ctl = new AbortController();
  current = ctl;
  const main = document.getElementById('main');
  const segs = segments(location.pathname);
  if (segs.length === 0) {
    history.replaceState(null, '', '/ui/jobs');
    segs.push('jobs');
  }
  const route = routes[segs[0]];
  const page = route ? route(segs.slice(1)) : null;
  markNav(segs[0]);
  if (!page) {
    document.title = 'Not found · Drover';
    replace(main, h('h1', null, 'Page not found'),
      message('warn', `There is no page at ${location.pathname}. `, h('a', {href: '/ui/jobs'}, 'Go to the jobs.')));
    return;
  }
  document.title = page.title + ' · Drover';
  replace(main, page.el);
  page.start(ctl.signal);
}

function markNav(first) {
  const section = first === 'nodes' ? 'clients' : first;
  for (const a of document.querySelectorAll('header nav a')) {
    if (a.getAttribute('href') === '/ui/' + section) a.setAttribute('aria-current', 'page');
    else a.removeAttribute('aria-current');
  }
}

// navigate shows path without reloading the document.
export function navigate(path) {
  history.pushState(null, '', path);
  show();
  const main = document.getElementById('main');
  main.focus({preventScroll: true});
  window.scrollTo(0, 0);
}

// Same-origin links into the UI are followed in place; a modified click
// (new tab, download) is left to the browser.
document.addEventListener('click', e => {
  if (e.defaultPrevented || e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) return;
  const a = e.target.closest('a[href]');
  if (!a || a.target || a.hasAttribute('download')) return;
  const url = new URL(a.href, location.href);
  if (url.origin !== location.origin || !url.pathname.startsWith('/ui/')) return;
  e.preventDefault();
  navigate(url.pathname + url.search + url.hash);
});

window.addEventListener('popstate', show);

// Leaving the UI (a reload, a typed address) ends the page's long polls
// first: the browser opens at most six connections to the agent, and the
// request for the next document must not wait behind them.
window.addEventListener('pagehide', () => current && current.abort());
window.addEventListener('beforeunload', () => current && current.abort());

function showToken() {
  const el = document.getElementById('token-link');
  el.textContent = token() ? 'ACL token (set)' : 'ACL token';
}
window.addEventListener('drover-token', () => {
  showToken();
  show();
});
window.addEventListener('storage', showToken);

status.addEventListener('change', e => {
  const live = document.getElementById('live');
  const d = e.detail;
  live.className = d.ok ? 'live-ok' : 'live-err';
  live.textContent = d.ok ? 'Live' : `Updates paused: ${d.error}. Retrying in ${Math.ceil(d.retryIn / 1000)}s.`;
});

async function agentInfo() {
  try {
    const {data} = await get('/v1/agent/self');
    const c = data.config || {};
    const v = c.Version || {};
    replace(document.getElementById('agent-info'),
      `Agent ${c.NodeName || (data.member || {}).Name || ''} · region ${c.Region || '—'} · ${c.Datacenter || '—'} · ${v.Version || ''}`);
  } catch {
    // The footer is a courtesy; the pages report their own errors.
  }
}

setInterval(() => refreshTimes(), 5000);
showToken();
agentInfo();
show();
