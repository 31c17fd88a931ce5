// One node: its status, resources and what its allocations use of them,
// drivers with their health, devices, attributes, and its allocations.

import {h, kv, replace, section, table} from '../dom.js';
import {badge, fromRFC3339, mhz, mib, plural, timeEl} from '../format.js';
import {watch} from '../api.js';
import {allocURL, api} from '../paths.js';
import {page, failed} from './common.js';
import {allocTable} from './job.js';

// attr renders a device attribute ({Int, Unit} ...) as "16 GiB".
export function attr(a) {
  if (!a) return '';
  const v = a.Int ?? a.Float ?? a.String ?? a.Bool;
  return `${v}${a.Unit ? ' ' + a.Unit : ''}`;
}

// used sums what the node's live allocations hold.
export function used(allocs) {
  const out = {cpu: 0, memory: 0, disk: 0, count: 0};
  for (const a of allocs || []) {
    if (a.DesiredStatus !== 'run' || ['complete', 'failed', 'lost'].includes(a.ClientStatus)) continue;
    out.count++;
    const r = a.AllocatedResources;
    if (!r) continue;
    for (const t of Object.values(r.Tasks || {})) {
      out.cpu += (t.Cpu && t.Cpu.CpuShares) || 0;
      out.memory += (t.Memory && t.Memory.MemoryMB) || 0;
    }
    out.disk += (r.Shared && r.Shared.DiskMB) || 0;
  }
  return out;
}

function resourceRow(label, total, reserved, inUse, fmt) {
  const avail = Math.max(0, (total || 0) - (reserved || 0));
  return h('tr', null, h('th', {scope: 'row'}, label),
    h('td', {class: 'num'}, fmt(total)), h('td', {class: 'num'}, fmt(reserved || 0)),
    h('td', {class: 'num'}, fmt(inUse)),
    h('td', null, h('meter', {min: 0, max: avail || 1, value: Math.min(inUse, avail || 1), low: avail * 0.7, high: avail * 0.9,
      optimum: 0, 'aria-label': `${label} allocated`}), ' ', avail ? Math.round(100 * inUse / avail) + '%' : '—'));
}

function resources(n, u) {
  const r = n.NodeResources || {};
  const rr = n.ReservedResources || {};
  return h('div', {class: 'table-wrap'}, h('table', null,
    h('caption', {class: 'visually-hidden'}, 'Resources'),
    h('thead', null, h('tr', null, ['Resource', 'Total', 'Reserved', 'Allocated', 'Use of the rest'].map((c, i) =>
      h('th', {scope: 'col', class: i && i < 4 ? 'num' : null}, c)))),
    h('tbody', null,
      resourceRow('CPU', r.Cpu && r.Cpu.CpuShares, rr.Cpu && rr.Cpu.CpuShares, u.cpu, mhz),
      resourceRow('Memory', r.Memory && r.Memory.MemoryMB, rr.Memory && rr.Memory.MemoryMB, u.memory, mib),
      resourceRow('Disk', r.Disk && r.Disk.DiskMB, rr.Disk && rr.Disk.DiskMB, u.disk, mib))));
}

function drivers(n) {
  const rows = Object.entries(n.Drivers || {}).sort(([a], [b]) => a.localeCompare(b));
  return table('Drivers', [
    {label: 'Driver', cell: ([name]) => name},
    {label: 'Detected', cell: ([, d]) => d.Detected ? 'yes' : 'no'},
    {label: 'Health', cell: ([, d]) => badge(d.Healthy ? 'healthy' : 'unhealthy')},
    {label: 'Description', cell: ([, d]) => d.HealthDescription},
    {label: 'Updated', cell: ([, d]) => timeEl(fromRFC3339(d.UpdateTime))},
    {label: 'Attributes', cell: ([, d]) => {
      const a = Object.entries(d.Attributes || {}).sort();
      return a.length ? h('details', null, h('summary', null, plural(a.length, 'attribute')),
        kv(a.map(([k, v]) => [k, v]))) : '—';
    }},
  ], rows, 'No drivers fingerprinted.');
}

// deviceHolders maps "vendor/type/name/instance" to the live allocations
// (and tasks) that hold the instance.
export function deviceHolders(allocs) {
  const out = {};
  for (const a of allocs || []) {
    if (a.DesiredStatus !== 'run' || ['complete', 'failed', 'lost'].includes(a.ClientStatus)) continue;
    for (const [task, r] of Object.entries((a.AllocatedResources && a.AllocatedResources.Tasks) || {})) {
      for (const d of r.Devices || []) {
        for (const id of d.DeviceIDs || []) {
          const k = `${d.Vendor}/${d.Type}/${d.Name}/${id}`;
          (out[k] = out[k] || []).push({alloc: a, task});
        }
      }
    }
  }
  return out;
}

function devices(n, allocs) {
  const groups = (n.NodeResources && n.NodeResources.Devices) || [];
  if (!groups.length) return h('p', {class: 'empty'}, 'No devices.');
  const holders = deviceHolders(allocs);
  return groups.map(g => h('div', {class: 'device'},
    h('h3', null, `${g.Vendor}/${g.Type}/${g.Name}`),
    kv(Object.entries(g.Attributes || {}).sort().map(([k, v]) => [k, attr(v)])),
    table('Instances of ' + g.Name, [
      {label: 'Instance', cell: i => h('span', {class: 'mono'}, i.ID)},
      {label: 'Health', cell: i => badge(i.Healthy ? 'healthy' : 'unhealthy')},
      {label: 'Description', cell: i => i.HealthDescription || ''},
      {label: 'PCI bus', cell: i => i.Locality ? i.Locality.PciBusID : ''},
      {label: 'Used by', cell: i => {
        const hs = holders[`${g.Vendor}/${g.Type}/${g.Name}/${i.ID}`] || [];
        return hs.length ? hs.map(x => h('span', {class: 'task-state'},
          h('a', {href: allocURL(x.alloc.ID)}, x.alloc.Name), ` (task ${x.task})`)) : h('span', {class: 'muted'}, 'free');
      }},
    ], g.Instances, 'No instances.')));
}

function attributes(n) {
  const rows = Object.entries(n.Attributes || {}).sort(([a], [b]) => a.localeCompare(b));
  const meta = Object.entries(n.Meta || {}).sort(([a], [b]) => a.localeCompare(b));
  return [
    h('details', null, h('summary', null, `Attributes (${rows.length})`),
      table('Attributes', [{label: 'Name', cell: r => h('code', null, r[0])}, {label: 'Value', cell: r => r[1]}], rows)),
    h('details', null, h('summary', null, `Meta (${meta.length})`),
      table('Meta', [{label: 'Name', cell: r => h('code', null, r[0])}, {label: 'Value', cell: r => r[1]}], meta, 'No meta.')),
  ];
}

export function render(id) {
  const meta = h('div', {class: 'meta'}, h('p', {class: 'loading'}, 'Loading…'));
  const head = h('div', {class: 'page-head'}, h('h1', null, 'Node ', h('span', {class: 'id'}, id)));
  const res = section('Resources', 'resources');
  const drv = section('Drivers', 'drivers');
  const dev = section('Devices', 'devices');
  const allocs = section('Allocations', 'allocations');
  const attrs = section('Attributes and meta', 'attributes');
  const events = section('Node events', 'node-events');
  let node = null;
  let nodeAllocs = null;
  const draw = () => {
    if (node) {
      const n = node;
      replace(head, h('h1', null, 'Node ', h('span', {class: 'id'}, n.Name)), ' ', badge(n.Status));
      replace(meta, kv([
        ['ID', h('span', {class: 'mono'}, n.ID)], ['Datacenter', n.Datacenter], ['Class', n.NodeClass || null],
        ['Node pool', n.NodePool], ['Eligibility', n.SchedulingEligibility], ['Draining', n.Drain ? 'yes' : 'no'],
        ['HTTP address', n.HTTPAddr], ['Status description', n.StatusDescription || null],
        ['OS', [n.Attributes && n.Attributes['os.name'], n.Attributes && n.Attributes['os.version']].filter(Boolean).join(' ') || null],
        ['Kernel', n.Attributes && n.Attributes['kernel.version']],
        ['Version', n.Attributes && (n.Attributes['nomad.version'] || n.Attributes['drover.version'])],
        ['Status updated', n.StatusUpdatedAt ? timeEl(new Date(n.StatusUpdatedAt * 1000)) : null],
      ]));
      replace(drv.body, drivers(n));
      replace(attrs.body, attributes(n));
      replace(events.body, table('Node events', [
        {label: 'Time', cell: e => timeEl(fromRFC3339(e.Timestamp))},
        {label: 'Subsystem', cell: e => e.Subsystem},
        {label: 'Message', cell: e => e.Message},
      ], [...(n.Events || [])].reverse(), 'No node events.'));
    }
    if (node && nodeAllocs) {
      replace(res.body, resources(node, used(nodeAllocs)));
      replace(dev.body, devices(node, nodeAllocs));
    }
    if (nodeAllocs) replace(allocs.body, allocTable(nodeAllocs, {withJob: true, withNode: false}));
  };
  return page('Node ' + id, h('div', null, head, meta), [res, allocs, drv, dev, attrs, events], signal => {
    watch(api(['node', id]), data => {
      node = data;
      document.title = `Node ${data.Name} · Drover`;
      draw();
    }, {signal, onError: err => failed(meta, err, `Node "${id}"`)});
    watch(api(['node', id, 'allocations']), data => {
      nodeAllocs = data || [];
      draw();
    }, {signal, onError: err => failed(allocs.body, err, 'The node\'s allocations')});
  });
}
