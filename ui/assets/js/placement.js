// Why allocations could not be placed, in words: the scheduler's
// AllocationMetric (an evaluation's FailedTGAllocs, per group) says how
// many nodes each check removed; this turns it into sentences and says
// what to do about each.

import {h} from './dom.js';
import {plural, mib, mhz} from './format.js';

// latestFailures returns the placement failures of the newest evaluation
// the scheduler processed (blocked ones only wait to retry), as the CLI's
// `job status` does, with that evaluation; evals are in any order.
export function latestFailures(evals) {
  const sorted = [...(evals || [])].sort((a, b) => b.CreateIndex - a.CreateIndex);
  for (const e of sorted) {
    if (e.Status === 'blocked') continue;
    const f = e.FailedTGAllocs || {};
    return Object.keys(f).length ? {eval: e, failed: f} : null;
  }
  return null;
}

// reasons turns one group's metric into [{text, hint}] sentences.
// ask is what one allocation of the group asks for ({cpu, memory, disk,
// devices}), when the job is known.
export function reasons(m, ask) {
  const out = [];
  const add = (text, hint) => out.push({text, hint});
  const inPool = m.NodesInPool || 0;
  if (!m.NodesEvaluated) {
    add(inPool ? `None of the ${plural(inPool, 'node')} in the pool was ready to be evaluated.`
      : 'No node was eligible: no client in the job\'s datacenters and node pool is ready.',
    'Check the nodes (drover node status): they must be ready, eligible and not draining, in one of the job\'s datacenters.');
  }
  for (const [dc, n] of Object.entries(m.NodesAvailable || {})) {
    if (n === 0) add(`No node is available in datacenter "${dc}".`,
      `Start a client with datacenter = "${dc}", or change the job's datacenters.`);
  }
  const filtered = m.ConstraintFiltered || {};
  for (const [what, n] of Object.entries(filtered).sort()) {
    if (what === 'missing drivers') {
      add(`${plural(n, 'node')} ${n === 1 ? 'lacks' : 'lack'} a healthy driver that a task uses.`,
        'See each node\'s drivers and their health; enable the driver in the client\'s plugin configuration.');
    } else if (what.startsWith('missing devices: ')) {
      add(`${plural(n, 'node')} ${n === 1 ? 'has' : 'have'} no device "${what.slice(17)}".`,
        'Only nodes whose device plugins fingerprint that device can run the group.');
    } else if (what.startsWith('devices: ')) {
      add(`${plural(n, 'node')} ${n === 1 ? 'has' : 'have'} no device matching ${what.slice(9)}.`,
        'Relax the device\'s constraints, or add nodes with matching devices.');
    } else if (what === 'distinct_hosts') {
      add(`${plural(n, 'node')} already ${n === 1 ? 'runs' : 'run'} an allocation of this job, and the job asks for distinct hosts.`,
        'Add nodes, or lower the count.');
    } else {
      add(`${plural(n, 'node')} ${n === 1 ? 'does' : 'do'} not satisfy the constraint ${what}.`,
        'Relax the constraint, or add nodes whose attributes match it.');
    }
  }
  for (const [cls, n] of Object.entries(m.ClassFiltered || {}).sort()) {
    add(`${plural(n, 'node')} of class "${cls}" ${n === 1 ? 'was' : 'were'} filtered out.`);
  }
  const dims = m.DimensionExhausted || {};
  for (const [dim, n] of Object.entries(dims).sort()) {
    add(`${plural(n, 'node')} ${n === 1 ? 'has' : 'have'} ${exhaustedWhat(dim, ask)}.`, exhaustedHint(dim));
  }
  if (m.NodesExhausted && Object.keys(dims).length === 0) {
    add(`${plural(m.NodesExhausted, 'node')} ${m.NodesExhausted === 1 ? 'has' : 'have'} too few free resources.`,
      'Stop other allocations, add nodes, or ask for less.');
  }
  for (const [cls, n] of Object.entries(m.ClassExhausted || {}).sort()) {
    add(`Class "${cls}": ${plural(n, 'node')} exhausted.`);
  }
  for (const q of m.QuotaExhausted || []) add(`The quota limit ${q} is reached.`);
  if (out.length === 0) {
    add('The scheduler recorded no reason.', 'Look at the evaluation\'s status description.');
  }
  return out;
}

function exhaustedWhat(dim, ask) {
  switch (dim) {
    case 'memory':
      return 'too little free memory' + (ask && ask.memory ? ` for the ${mib(ask.memory)} that one allocation asks for` : '');
    case 'cpu':
      return 'too little free CPU' + (ask && ask.cpu ? ` for the ${mhz(ask.cpu)} that one allocation asks for` : '');
    case 'disk':
      return 'too little free disk' + (ask && ask.disk ? ` for the ${mib(ask.disk)} that one allocation asks for` : '');
  }
  if (dim.startsWith('devices: ')) return `no free healthy instance of device ${dim.slice(9)}`;
  return `no room in dimension "${dim}"`;
}

function exhaustedHint(dim) {
  if (dim.startsWith('devices: ')) return 'Wait for the instances in use to be freed, or add nodes with that device.';
  if (dim.startsWith('network')) return 'Choose another port, or add nodes.';
  return `Stop other allocations, add nodes, or lower the group's ${dim} request.`;
}

// groupAsk sums what one allocation of group asks for.
export function groupAsk(job, group) {
  const tg = (job && job.TaskGroups || []).find(g => g.Name === group);
  if (!tg) return null;
  const ask = {cpu: 0, memory: 0, disk: tg.EphemeralDisk ? tg.EphemeralDisk.SizeMB : 0};
  for (const t of tg.Tasks || []) {
    const r = t.Resources || {};
    ask.cpu += r.CPU || 0;
    ask.memory += r.MemoryMB || 0;
  }
  return ask;
}

// explain renders one group's failure: a heading with the count, how many
// nodes the scheduler looked at, then each reason with its hint.
export function explain(group, m, ask) {
  const n = (m.CoalescedFailures || 0) + 1;
  const looked = `The scheduler evaluated ${plural(m.NodesEvaluated || 0, 'node')}` +
    (m.NodesInPool ? ` of ${m.NodesInPool} in the pool` : '') +
    (m.NodesFiltered ? `; ${m.NodesFiltered} filtered out` : '') +
    (m.NodesExhausted ? `; ${m.NodesExhausted} without room` : '') + '.';
  return h('div', {class: 'placement'},
    h('h3', null, `Group "${group}": ${plural(n, 'allocation')} not placed`),
    h('p', null, looked),
    h('ul', null, reasons(m, ask).map(r =>
      h('li', null, r.text, r.hint ? h('span', {class: 'hint'}, ' ' + r.hint) : null))));
}
