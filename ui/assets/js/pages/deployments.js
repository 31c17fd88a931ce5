// Deployments: every job's rollouts with each group's progress.

import {h, replace, section, table} from '../dom.js';
import {badge, fromRFC3339, shortID, timeEl} from '../format.js';
import {watch} from '../api.js';
import {jobURL} from '../paths.js';
import {page, failed} from './common.js';

// deploymentGroups shows each group's progress in deployment d.
export function deploymentGroups(d) {
  const groups = Object.entries(d.TaskGroups || {}).sort(([a], [b]) => a.localeCompare(b));
  return table('Deployment groups', [
    {label: 'Group', cell: ([g]) => g},
    {label: 'Desired', cell: ([, s]) => s.DesiredTotal, num: true},
    {label: 'Canaries', cell: ([, s]) => s.DesiredCanaries, num: true},
    {label: 'Placed', cell: ([, s]) => s.PlacedAllocs, num: true},
    {label: 'Healthy', cell: ([, s]) => s.HealthyAllocs, num: true},
    {label: 'Unhealthy', cell: ([, s]) => s.UnhealthyAllocs, num: true},
    {label: 'Promoted', cell: ([, s]) => s.DesiredCanaries ? (s.Promoted ? 'yes' : 'no') : '—'},
    {label: 'Progress deadline', cell: ([, s]) => d.Status === 'running' ? timeEl(fromRFC3339(s.RequireProgressBy)) : '—'},
  ], groups, 'No groups.');
}

function progress(d) {
  let healthy = 0;
  let total = 0;
  for (const s of Object.values(d.TaskGroups || {})) {
    healthy += s.HealthyAllocs || 0;
    total += s.DesiredTotal || 0;
  }
  return `${healthy} of ${total} healthy`;
}

export function render() {
  const list = section('Deployments', 'deployments', {hideTitle: true});
  return page('Deployments', h('h1', null, 'Deployments'), [list], signal => {
    watch('/v1/deployments?namespace=*', data => {
      const rows = [...(data || [])].sort((a, b) => b.CreateIndex - a.CreateIndex);
      replace(list.body, table('Deployments', [
        {label: 'ID', cell: d => h('span', {class: 'mono'}, shortID(d.ID))},
        {label: 'Job', cell: d => h('a', {href: jobURL(d.JobID, d.Namespace)}, d.JobID)},
        {label: 'Version', cell: d => d.JobVersion, num: true},
        {label: 'Status', cell: d => badge(d.Status)},
        {label: 'Progress', cell: progress},
        {label: 'Description', cell: d => d.StatusDescription},
      ], rows, 'No deployments: they are made when a service job with an update block changes.'));
    }, {signal, onError: err => failed(list.body, err, 'The deployment list')});
  });
}
