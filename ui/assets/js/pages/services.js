// Services: the Nomad services registered in every namespace with their
// tags and instance counts, and one service with its instances.

import {h, kv, replace, section, table} from '../dom.js';
import {shortID} from '../format.js';
import {get, watch} from '../api.js';
import {allocURL, api, jobURL, namespace, nodeURL, serviceURL} from '../paths.js';
import {page, failed} from './common.js';

// render is /ui/services or, with a name, /ui/services/:name.
export function render(name) {
  return name ? one(name) : list();
}

function list() {
  const body = section('Services', 'services', {hideTitle: true});
  return page('Services', h('h1', null, 'Services'), [body], signal => {
    let generation = 0;
    watch('/v1/services?namespace=*', async data => {
      // The list is grouped by namespace: [{Namespace, Services: [{ServiceName, Tags}]}].
      const rows = [];
      for (const ns of data || []) for (const s of ns.Services || []) rows.push({ns: ns.Namespace, ...s});
      rows.sort((a, b) => a.ServiceName.localeCompare(b.ServiceName) || a.ns.localeCompare(b.ns));
      // The list has no instance counts: each service's instances are
      // read (a later list update supersedes an unfinished count).
      const gen = ++generation;
      await Promise.all(rows.map(async r => {
        try {
          const {data: inst} = await get(api(['service', r.ServiceName], {namespace: r.ns}), {signal});
          r.instances = (inst || []).length;
          r.jobs = [...new Set((inst || []).map(i => i.JobID))].sort();
        } catch {
          r.instances = null; // gone meanwhile, or refused: shown as unknown
        }
      }));
      if (gen !== generation || signal.aborted) return;
      replace(body.body, table('Services', [
        {label: 'Service', cell: s => h('a', {href: serviceURL(s.ServiceName, s.ns)}, s.ServiceName)},
        {label: 'Namespace', cell: s => s.ns},
        {label: 'Tags', cell: s => (s.Tags || []).map(t => h('span', {class: 'tag'}, t))},
        {label: 'Jobs', cell: s => (s.jobs || []).length
          ? s.jobs.map(j => h('a', {href: jobURL(j, s.ns), class: 'tag-link'}, j)) : '—'},
        {label: 'Instances', cell: s => s.instances === null ? '—' : s.instances, num: true},
      ], rows, 'No services registered: a job registers its service blocks with provider = "nomad" while its allocations run.'));
    }, {signal, onError: err => failed(body.body, err, 'The service list')});
  });
}

function one(name) {
  const ns = namespace();
  const meta = h('div', {class: 'meta'}, h('p', {class: 'loading'}, 'Loading…'));
  const instances = section('Instances', 'instances');
  return page('Service ' + name, h('div', null, h('h1', null, 'Service ', h('span', {class: 'id'}, name)), meta),
    [instances], signal => {
      watch(api(['service', name], {namespace: ns}), data => {
        const rows = [...(data || [])].sort((a, b) => a.AllocID.localeCompare(b.AllocID) || a.ID.localeCompare(b.ID));
        const tags = [...new Set(rows.flatMap(r => r.Tags || []))].sort();
        replace(meta, kv([
          ['Namespace', ns],
          ['Instances', rows.length],
          ['Tags', tags.length ? tags.map(t => h('span', {class: 'tag'}, t)) : null],
          ['Jobs', [...new Set(rows.map(r => r.JobID))].sort().map(j => h('a', {href: jobURL(j, ns), class: 'tag-link'}, j))],
        ]));
        replace(instances.body, table('Instances', [
          {label: 'Address', cell: r => h('span', {class: 'mono'}, r.Address)},
          {label: 'Port', cell: r => r.Port, num: true},
          {label: 'Allocation', cell: r => h('a', {href: allocURL(r.AllocID), class: 'mono'}, shortID(r.AllocID))},
          {label: 'Node', cell: r => h('a', {href: nodeURL(r.NodeID), class: 'mono'}, shortID(r.NodeID))},
          {label: 'Datacenter', cell: r => r.Datacenter},
          {label: 'Tags', cell: r => (r.Tags || []).map(t => h('span', {class: 'tag'}, t))},
          {label: 'ID', cell: r => h('span', {class: 'mono'}, r.ID)},
        ], rows, 'No instances: the service is registered only while an allocation that provides it runs.'));
      }, {signal, onError: err => failed(meta, err, `Service "${name}"`)});
    });
}
