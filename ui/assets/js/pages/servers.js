// The servers: the leader, the raft peers, and this agent's view of
// itself. These endpoints do not block, so the page polls them.

import {h, kv, message, replace, section, table} from '../dom.js';
import {badge} from '../format.js';
import {get, notAvailable, watch} from '../api.js';
import {page, failed} from './common.js';

export function render() {
  const servers = section('Servers', 'servers');
  const agent = section('This agent', 'agent');
  return page('Servers', h('h1', null, 'Servers'), [servers, agent], signal => {
    watch('/v1/status/peers', async peers => {
      let leader = '';
      let members = null;
      let self = null;
      try {
        self = (await get('/v1/agent/self', {signal})).data;
      } catch {
        self = null;
      }
      try {
        leader = (await get('/v1/status/leader', {signal})).data;
      } catch {
        leader = '';
      }
      try {
        members = (await get('/v1/agent/members', {signal})).data;
      } catch (err) {
        if (!notAvailable(err)) members = null;
      }
      const byAddr = {};
      if (self && self.member) byAddr[`${self.member.Addr}:${self.member.Port}`] = self.member;
      for (const m of (members && members.Members) || []) byAddr[`${m.Addr}:${m.Port}`] = m;
      replace(servers.body,
        leader ? null : message('error', 'There is no leader: the servers cannot make changes until one is elected.'),
        table('Servers', [
          {label: 'Address', cell: p => h('span', {class: 'mono'}, p)},
          {label: 'Name', cell: p => (byAddr[p] || {}).Name || '—'},
          {label: 'Role', cell: p => p === leader ? badge('leader') : badge('follower')},
          {label: 'Status', cell: p => (byAddr[p] || {}).Status || '—'},
          {label: 'Datacenter', cell: p => ((byAddr[p] || {}).Tags || {}).dc || '—'},
          {label: 'Version', cell: p => ((byAddr[p] || {}).Tags || {}).build || '—'},
        ], peers || [], 'No raft peers.'),
        members ? null : h('p', {class: 'hint'}, 'This agent does not list cluster members (/v1/agent/members): the table shows the raft peers, with what this agent knows of itself.'));
    }, {signal, blocking: false, period: 10000, onError: err => failed(servers.body, err, 'The server list')});
    watch('/v1/agent/self', self => {
      const c = self.config || {};
      const s = self.stats || {};
      const nomad = s.nomad || {};
      const client = s.client || {};
      const rt = s.runtime || {};
      replace(agent.body, kv([
        ['Name', (self.member || {}).Name], ['Region', c.Region], ['Datacenter', c.Datacenter],
        ['Version', (c.Version || {}).Version], ['Server', c.Server && c.Server.Enabled ? 'yes' : 'no'],
        ['Client', c.Client && c.Client.Enabled ? 'yes' : 'no'], ['Dev mode', c.DevMode ? 'yes' : null],
        ['Raft state', nomad.raft_state], ['Raft applied index', nomad.raft_applied],
        ['Leader', nomad.leader_addr], ['Jobs', nomad.jobs], ['Nodes', nomad.nodes],
        ['Blocked evaluations', nomad.blocked_evals], ['Scheduler workers', nomad.num_workers],
        ['Allocations on this client', client.num_allocations], ['Last heartbeat', client.last_heartbeat],
        ['Go', rt.version], ['Goroutines', rt.goroutines],
      ]));
    }, {signal, blocking: false, period: 10000, onError: err => failed(agent.body, err, 'This agent')});
  });
}
