// The nodes (clients): status, eligibility, drivers and how many
// allocations each runs, updated live.

import {h, replace, section, table} from '../dom.js';
import {badge, shortID} from '../format.js';
import {watch} from '../api.js';
import {nodeURL} from '../paths.js';
import {page, failed} from './common.js';

// driverList shows a node's detected drivers, unhealthy ones marked.
export function driverList(drivers) {
  const names = Object.keys(drivers || {}).filter(n => drivers[n].Detected).sort();
  if (!names.length) return h('span', {class: 'muted'}, 'none');
  return names.map(n => h('span', {class: 'driver ' + (drivers[n].Healthy ? 'healthy' : 'unhealthy'),
    title: drivers[n].HealthDescription || ''}, n + (drivers[n].Healthy ? '' : ' (unhealthy)')));
}

export function render() {
  const list = section('Nodes', 'nodes', {hideTitle: true});
  let nodes = null;
  let running = {};
  const draw = () => {
    if (!nodes) return;
    const rows = [...nodes].sort((a, b) => a.Name.localeCompare(b.Name));
    replace(list.body, table('Nodes', [
      {label: 'Name', cell: n => h('a', {href: nodeURL(n.ID)}, n.Name)},
      {label: 'ID', cell: n => h('span', {class: 'mono'}, shortID(n.ID))},
      {label: 'Datacenter', cell: n => n.Datacenter},
      {label: 'Class', cell: n => n.NodeClass || h('span', {class: 'muted'}, '—')},
      {label: 'Address', cell: n => n.Address},
      {label: 'Status', cell: n => badge(n.Status)},
      {label: 'Eligibility', cell: n => n.SchedulingEligibility + (n.Drain ? ' (draining)' : '')},
      {label: 'Drivers', cell: n => driverList(n.Drivers)},
      {label: 'Running allocations', cell: n => running[n.ID] || 0, num: true},
      {label: 'Version', cell: n => n.Version},
    ], rows, 'No nodes: start a client (drover agent -client or -dev).'));
  };
  return page('Nodes', h('h1', null, 'Nodes'), [list], signal => {
    watch('/v1/nodes', data => {
      nodes = data || [];
      draw();
    }, {signal, onError: err => failed(list.body, err, 'The node list')});
    watch('/v1/allocations?namespace=*', data => {
      running = {};
      for (const a of data || []) if (a.ClientStatus === 'running') running[a.NodeID] = (running[a.NodeID] || 0) + 1;
      draw();
    }, {signal, onError: () => false});
  });
}
