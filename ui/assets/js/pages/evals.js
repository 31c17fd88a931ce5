// Evaluations: the list, and one evaluation with its placement failures
// explained and the allocations it made.

import {h, kv, replace, section} from '../dom.js';
import {badge, fromNanos, fromRFC3339, timeEl} from '../format.js';
import {get, watch} from '../api.js';
import {api, evalURL, jobURL} from '../paths.js';
import {explain, groupAsk} from '../placement.js';
import {page, failed} from './common.js';
import {allocTable, evalTable} from './job.js';

export function render(id) {
  return id ? one(id) : list();
}

function list() {
  const evals = section('Evaluations', 'evaluations', {hideTitle: true});
  return page('Evaluations', h('h1', null, 'Evaluations'), [evals], signal => {
    watch('/v1/evaluations?namespace=*', data => replace(evals.body, evalTable(data, {withJob: true})),
      {signal, onError: err => failed(evals.body, err, 'The evaluation list')});
  });
}

function one(id) {
  const meta = h('div', {class: 'meta'}, h('p', {class: 'loading'}, 'Loading…'));
  const placement = section('Placement failures', 'placement');
  const allocs = section('Allocations it placed or changed', 'allocations');
  return page('Evaluation ' + id, h('div', null, h('h1', null, 'Evaluation ', h('span', {class: 'id'}, id)), meta),
    [placement, allocs], signal => {
      let job = null;
      watch(api(['evaluation', id]), async e => {
        if (!job && e.JobID) {
          try {
            job = (await get(api(['job', e.JobID], {namespace: e.Namespace}), {signal})).data;
          } catch {
            job = null; // the job may be gone; the failures still show
          }
        }
        const link = (eid, text) => eid ? h('a', {href: evalURL(eid), class: 'mono'}, text || eid) : null;
        replace(meta, kv([
          ['Status', badge(e.Status)], ['Description', e.StatusDescription],
          ['Job', h('a', {href: jobURL(e.JobID, e.Namespace)}, e.JobID)], ['Namespace', e.Namespace],
          ['Type', e.Type], ['Priority', e.Priority], ['Triggered by', e.TriggeredBy],
          ['Node', e.NodeID || null], ['Previous evaluation', link(e.PreviousEval)],
          ['Next evaluation', link(e.NextEval)], ['Blocked evaluation', link(e.BlockedEval)],
          ['Wait until', fromRFC3339(e.WaitUntil) ? timeEl(fromRFC3339(e.WaitUntil)) : null],
          ['Queued allocations', Object.entries(e.QueuedAllocations || {}).map(([g, n]) => `${g}: ${n}`).join(', ') || null],
          ['Created', timeEl(fromNanos(e.CreateTime))], ['Modified', timeEl(fromNanos(e.ModifyTime))],
        ]));
        const f = e.FailedTGAllocs || {};
        replace(placement.body, Object.keys(f).length
          ? Object.keys(f).sort().map(g => explain(g, f[g], groupAsk(job, g)))
          : h('p', {class: 'empty'}, 'Every allocation this evaluation asked for was placed.'));
      }, {signal, onError: err => failed(meta, err, `Evaluation "${id}"`)});
      watch(api(['evaluation', id, 'allocations']), data => replace(allocs.body, allocTable(data)),
        {signal, onError: err => failed(allocs.body, err, 'The evaluation\'s allocations')});
    });
}
