// The jobs list: every job with its type, status, groups and allocation
// counts, updated live.

import {h, replace, section, table} from '../dom.js';
import {badge, fromNanos, timeEl} from '../format.js';
import {watch} from '../api.js';
import {jobURL} from '../paths.js';
import {page, failed} from './common.js';

const states = ['Queued', 'Starting', 'Running', 'Failed', 'Complete', 'Lost', 'Unknown'];

// counts sums a job summary's groups by allocation state.
export function counts(summary) {
  const out = Object.fromEntries(states.map(s => [s, 0]));
  for (const g of Object.values(summary && summary.Summary || {})) {
    for (const s of states) out[s] += g[s] || 0;
  }
  return out;
}

// countsCell shows the non-zero counts: "2 running · 1 queued".
export function countsCell(c) {
  const parts = states.filter(s => c[s]).map(s => h('span', {class: 'count count-' + s.toLowerCase()}, `${c[s]} ${s.toLowerCase()}`));
  if (!parts.length) return h('span', {class: 'muted'}, 'no allocations');
  return parts.flatMap((p, i) => i ? [' · ', p] : [p]);
}

export function render() {
  const list = section('Jobs', 'jobs', {hideTitle: true});
  const filter = h('input', {type: 'search', id: 'job-filter', placeholder: 'Filter by name', 'aria-label': 'Filter jobs by name'});
  let jobs = null;
  const draw = () => {
    if (!jobs) return;
    const f = filter.value.trim().toLowerCase();
    const rows = jobs.filter(j => !f || j.ID.toLowerCase().includes(f) || j.Name.toLowerCase().includes(f))
      .sort((a, b) => a.ID.localeCompare(b.ID));
    const multiNS = new Set(jobs.map(j => j.Namespace)).size > 1;
    replace(list.body, table('Jobs', [
      {label: 'Name', cell: j => h('a', {href: jobURL(j.ID, j.Namespace)}, j.ID)},
      multiNS ? {label: 'Namespace', cell: j => j.Namespace} : null,
      {label: 'Type', cell: j => j.Type},
      {label: 'Priority', cell: j => j.Priority, num: true},
      {label: 'Status', cell: j => badge(j.Status, j.Stop ? '(stopped)' : '')},
      {label: 'Groups', cell: j => Object.keys(j.JobSummary && j.JobSummary.Summary || {}).length, num: true},
      {label: 'Allocations', cell: j => countsCell(counts(j.JobSummary))},
      {label: 'Submitted', cell: j => timeEl(fromNanos(j.SubmitTime))},
    ].filter(Boolean), rows, jobs.length ? 'No job matches the filter.' :
      ['No jobs yet. Run one with ', h('code', null, 'drover job run example.nomad.hcl'), '.']));
  };
  filter.addEventListener('input', draw);
  return page('Jobs', h('div', {class: 'page-head'}, h('h1', null, 'Jobs'), filter), [list], signal => {
    watch('/v1/jobs?namespace=*', data => {
      jobs = data || [];
      draw();
    }, {signal, onError: err => failed(list.body, err, 'The job list')});
  });
}
