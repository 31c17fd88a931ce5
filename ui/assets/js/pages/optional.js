// Variables and services: shown when the agent's API has them, and
// otherwise said to be not available on this agent.

import {h, replace, section, table} from '../dom.js';
import {fromNanos, timeEl} from '../format.js';
import {watch} from '../api.js';
import {jobURL} from '../paths.js';
import {page, failed} from './common.js';

export function variables() {
  const list = section('Variables', 'variables', {hideTitle: true});
  return page('Variables', h('h1', null, 'Variables'), [list], signal => {
    watch('/v1/vars?namespace=*', data => replace(list.body, table('Variables', [
      {label: 'Path', cell: v => h('code', null, v.Path)},
      {label: 'Namespace', cell: v => v.Namespace},
      {label: 'Modified', cell: v => timeEl(fromNanos(v.ModifyTime))},
    ], [...(data || [])].sort((a, b) => a.Path.localeCompare(b.Path)), 'No variables.')),
    {signal, onError: err => failed(list.body, err, 'The variable list')});
  });
}

export function services() {
  const list = section('Services', 'services', {hideTitle: true});
  return page('Services', h('h1', null, 'Services'), [list], signal => {
    watch('/v1/services?namespace=*', data => {
      // The list is grouped by namespace: [{Namespace, Services: [{ServiceName, Tags}]}].
      const rows = [];
      for (const ns of data || []) for (const s of ns.Services || []) rows.push({ns: ns.Namespace, ...s});
      rows.sort((a, b) => a.ServiceName.localeCompare(b.ServiceName));
      replace(list.body, table('Services', [
        {label: 'Service', cell: s => s.ServiceName},
        {label: 'Namespace', cell: s => s.ns},
        {label: 'Tags', cell: s => (s.Tags || []).join(', ')},
        {label: 'Jobs', cell: s => s.JobID ? h('a', {href: jobURL(s.JobID, s.ns)}, s.JobID) : '—'},
      ], rows, 'No services registered.'));
    }, {signal, onError: err => failed(list.body, err, 'The service list')});
  });
}
