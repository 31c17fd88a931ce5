// One job: its groups and their counts, why allocations are not placed,
// its allocations, deployments and evaluations, updated live.

import {h, kv, message, replace, section, table} from '../dom.js';
import {badge, fromNanos, shortID, timeEl, mhz, mib} from '../format.js';
import {get, watch} from '../api.js';
import {allocURL, api, evalURL, jobURL, namespace, nodeURL} from '../paths.js';
import {explain, groupAsk, latestFailures} from '../placement.js';
import {page, failed} from './common.js';
import {deploymentGroups} from './deployments.js';

// taskStates shows each task's state: "server running".
export function taskStates(a) {
  const ts = a.TaskStates || {};
  const names = Object.keys(ts).sort();
  if (!names.length) return h('span', {class: 'muted'}, '—');
  return names.map(n => h('span', {class: 'task-state'}, n + ' ',
    ts[n].Failed ? badge('failed', '(' + ts[n].State + ')') : badge(ts[n].State)));
}

// allocTable lists allocations, newest first.
export function allocTable(allocs, {withJob = false, withNode = true} = {}) {
  const rows = [...(allocs || [])].sort((a, b) => b.CreateIndex - a.CreateIndex);
  return table('Allocations', [
    {label: 'ID', cell: a => h('a', {href: allocURL(a.ID), class: 'mono'}, shortID(a.ID))},
    {label: 'Name', cell: a => a.Name},
    withJob ? {label: 'Job', cell: a => h('a', {href: jobURL(a.JobID, a.Namespace)}, a.JobID)} : null,
    withNode ? {label: 'Node', cell: a => a.NodeID ? h('a', {href: nodeURL(a.NodeID)}, a.NodeName || shortID(a.NodeID)) : '—'} : null,
    {label: 'Version', cell: a => a.JobVersion ?? (a.Job ? a.Job.Version : '—'), num: true},
    {label: 'Desired', cell: a => a.DesiredStatus},
    {label: 'Status', cell: a => badge(a.ClientStatus)},
    {label: 'Tasks', cell: taskStates},
    {label: 'Created', cell: a => timeEl(fromNanos(a.CreateTime))},
    {label: 'Modified', cell: a => timeEl(fromNanos(a.ModifyTime))},
  ].filter(Boolean), rows, 'No allocations placed.');
}

// evalTable lists evaluations, newest first.
export function evalTable(evals, {withJob = false} = {}) {
  const rows = [...(evals || [])].sort((a, b) => b.CreateIndex - a.CreateIndex);
  return table('Evaluations', [
    {label: 'ID', cell: e => h('a', {href: evalURL(e.ID), class: 'mono'}, shortID(e.ID))},
    withJob ? {label: 'Job', cell: e => h('a', {href: jobURL(e.JobID, e.Namespace)}, e.JobID)} : null,
    {label: 'Triggered by', cell: e => e.TriggeredBy},
    {label: 'Priority', cell: e => e.Priority, num: true},
    {label: 'Status', cell: e => badge(e.Status)},
    {label: 'Description', cell: e => e.StatusDescription || ''},
    {label: 'Placement failures', cell: e => {
      const f = Object.keys(e.FailedTGAllocs || {});
      return f.length ? h('span', {class: 'fail'}, f.sort().join(', ')) : h('span', {class: 'muted'}, 'none');
    }},
    {label: 'Created', cell: e => timeEl(fromNanos(e.CreateTime))},
  ].filter(Boolean), rows, 'No evaluations.');
}

function groupsTable(job, summary) {
  const sum = summary && summary.Summary || {};
  const groups = (job.TaskGroups || []).map(g => g.Name);
  for (const g of Object.keys(sum)) if (!groups.includes(g)) groups.push(g);
  const tg = name => (job.TaskGroups || []).find(g => g.Name === name) || {};
  const n = (g, k) => (sum[g] || {})[k] || 0;
  return table('Task groups', [
    {label: 'Group', cell: g => g},
    {label: 'Count', cell: g => tg(g).Count ?? '—', num: true},
    {label: 'Tasks', cell: g => (tg(g).Tasks || []).map(t => h('span', {class: 'task-state'}, t.Name, ' ', h('span', {class: 'muted'}, `(${t.Driver})`)))},
    {label: 'CPU / memory', cell: g => {
      const a = groupAsk(job, g);
      return a ? `${mhz(a.cpu)} / ${mib(a.memory)}` : '—';
    }},
    ...['Queued', 'Starting', 'Running', 'Failed', 'Complete', 'Lost', 'Unknown'].map(k =>
      ({label: k, cell: g => n(g, k), num: true})),
  ], groups, 'The job has no groups.');
}

export function render(id) {
  const ns = namespace();
  const q = {namespace: ns};
  const head = h('div', {class: 'page-head'}, h('h1', null, 'Job ', h('span', {class: 'id'}, id)));
  const meta = h('div', {class: 'meta'}, h('p', {class: 'loading'}, 'Loading…'));
  const placement = section('Placement failures', 'placement');
  placement.el.hidden = true;
  const groups = section('Task groups', 'groups');
  const deployment = section('Latest deployment', 'deployment');
  deployment.el.hidden = true;
  const allocs = section('Allocations', 'allocations');
  const evals = section('Evaluations', 'evaluations');
  const definition = h('details', {class: 'definition'}, h('summary', null, 'Job definition (JSON)'), h('pre', {class: 'json'}));
  const state = {job: null, summary: null, allocs: null, evals: null, deployments: null};

  const draw = () => {
    const j = state.job;
    if (j) {
      replace(head, h('h1', null, 'Job ', h('span', {class: 'id'}, j.ID)), ' ', badge(j.Status, j.Stop ? '(stopped)' : ''));
      replace(meta, kv([
        ['Name', j.Name], ['Type', j.Type], ['Namespace', j.Namespace], ['Priority', j.Priority],
        ['Datacenters', (j.Datacenters || []).join(', ')], ['Version', j.Version],
        ['Stable', j.Stable ? 'yes' : 'no'], ['Submitted', timeEl(fromNanos(j.SubmitTime))],
        ['Description', j.StatusDescription || null],
      ]));
      replace(definition.querySelector('pre'), JSON.stringify(j, null, 2));
      replace(groups.body, groupsTable(j, state.summary));
    }
    if (state.evals) {
      const f = latestFailures(state.evals);
      placement.el.hidden = !f;
      if (f) {
        const blocked = state.evals.find(e => e.Status === 'blocked');
        replace(placement.body,
          Object.keys(f.failed).sort().map(g => explain(g, f.failed[g], groupAsk(state.job, g))),
          blocked ? h('p', {class: 'hint'}, 'Evaluation ', h('a', {href: evalURL(blocked.ID), class: 'mono'}, shortID(blocked.ID)),
            ' is blocked: the scheduler will try again when the cluster changes (a node joins, resources are freed).') : null);
      }
      replace(evals.body, evalTable(state.evals));
    }
    if (state.allocs) replace(allocs.body, allocTable(state.allocs));
    if (state.deployments) {
      const latest = [...state.deployments].sort((a, b) => b.CreateIndex - a.CreateIndex)[0];
      deployment.el.hidden = !latest;
      replace(deployment.body, latest ? [
        kv([['ID', h('span', {class: 'mono'}, latest.ID)], ['Job version', latest.JobVersion], ['Status', badge(latest.Status)],
          ['Description', latest.StatusDescription]]),
        deploymentGroups(latest),
      ] : h('p', {class: 'empty'}, 'No deployments.'));
    }
  };

  // Allocation changes move the summary and deployments; they are read
  // once per change (they hold no long poll of their own, so that a page
  // stays well within the browser's six connections to the agent). Changes
  // that come while a read is under way make one more read.
  let busy = false;
  let again = false;
  const refreshDerived = async signal => {
    if (busy) {
      again = true;
      return;
    }
    busy = true;
    try {
      do {
        again = false;
        const [s, d] = await Promise.all([
          get(api(['job', id, 'summary'], q), {signal}),
          get(api(['job', id, 'deployments'], q), {signal}),
        ]);
        state.summary = s.data;
        state.deployments = d.data || [];
        draw();
      } while (again && !signal.aborted);
    } catch (err) {
      if (!signal.aborted) failed(groups.body, err, 'The job\'s summary');
    } finally {
      busy = false;
    }
  };

  return page('Job ' + id, h('div', null, head, meta), [placement, groups, deployment, allocs, evals, definition], signal => {
    const gone = err => {
      const done = failed(groups.body, err, `Job "${id}" in namespace "${ns}"`);
      if (done) replace(meta, message('warn', `Job "${id}" does not exist in namespace "${ns}".`));
      return done;
    };
    watch(api(['job', id], q), data => {
      state.job = data;
      draw();
      refreshDerived(signal);
    }, {signal, onError: gone});
    watch(api(['job', id, 'allocations'], q), data => {
      state.allocs = data || [];
      draw();
      refreshDerived(signal);
    }, {signal, onError: err => failed(allocs.body, err, 'The job\'s allocations')});
    watch(api(['job', id, 'evaluations'], q), data => {
      state.evals = data || [];
      draw();
    }, {signal, onError: err => failed(evals.body, err, 'The job\'s evaluations')});
  });
}
