// One allocation: its tasks' states, every task event in order with the
// time between them, resources and usage, why it was placed where it is,
// and the tasks' logs, live.

import {h, kv, replace, section, table} from '../dom.js';
import {badge, clock, duration, fromNanos, fromRFC3339, mhz, mib, shortID, since, timeEl} from '../format.js';
import {watch} from '../api.js';
import {allocURL, api, evalURL, jobURL, nodeURL} from '../paths.js';
import {logView} from '../logs.js';
import {page, failed} from './common.js';

// eventDetails lists what an event carries beyond its message (what the
// message already says is left out).
export function eventDetails(e) {
  const msg = squash(e.DisplayMessage || e.Message || '');
  return rawDetails(e).filter(x => !msg.includes(squash(x)));
}

// squash lowercases s and drops what is not a letter or a digit, so that
// "Exit Code: 3" and "exit code 3" compare equal.
function squash(s) {
  return String(s).toLowerCase().replace(/[^a-z0-9]/g, '');
}

function rawDetails(e) {
  const d = [];
  if (e.Type === 'Terminated' || e.ExitCode) d.push(`exit code ${e.ExitCode}`);
  if (e.Signal) d.push(`signal ${e.Signal}`);
  if (e.RestartReason) d.push(e.RestartReason);
  if (e.StartDelay) d.push(`restarting in ${duration(e.StartDelay)}`);
  if (e.DriverError) d.push(`driver error: ${e.DriverError}`);
  if (e.SetupError) d.push(`setup error: ${e.SetupError}`);
  if (e.KillError) d.push(`kill error: ${e.KillError}`);
  if (e.KillReason) d.push(`kill reason: ${e.KillReason}`);
  if (e.KillTimeout) d.push(`kill timeout ${duration(e.KillTimeout)}`);
  if (e.FailedSibling) d.push(`sibling task "${e.FailedSibling}" failed`);
  if (e.TaskSignal) d.push(`signal ${e.TaskSignal}${e.TaskSignalReason ? ': ' + e.TaskSignalReason : ''}`);
  if (e.DriverMessage) d.push(e.DriverMessage);
  if (e.FailsTask) d.push('fails the task');
  for (const [k, v] of Object.entries(e.Details || {})) {
    if (!['exit_code', 'signal', 'restart_reason', 'driver_error', 'setup_error', 'kill_reason', 'kill_error',
      'start_delay', 'fails_task', 'failed_sibling', 'kill_timeout', 'driver_message'].includes(k)) d.push(`${k}: ${v}`);
  }
  return d;
}

// eventsTable lists a task's events oldest first (newestFirst reverses),
// each with its time of day and the time since the first event.
export function eventsTable(events, newestFirst) {
  const evs = [...(events || [])];
  const first = evs.length ? fromNanos(evs[0].Time) : null;
  if (newestFirst) evs.reverse();
  return table('Task events', [
    {label: 'Time', cell: e => {
      const d = fromNanos(e.Time);
      return h('time', {datetime: d ? d.toISOString() : '', title: d ? d.toLocaleString() : ''}, clock(d));
    }},
    {label: 'Since received', cell: e => h('span', {class: 'muted'}, since(first, fromNanos(e.Time))), num: true},
    {label: 'Type', cell: e => h('span', {class: 'event-type' + (e.FailsTask || e.DriverError || e.SetupError ? ' fail' : '')}, e.Type)},
    {label: 'Description', cell: e => [e.DisplayMessage || e.Message || '',
      eventDetails(e).map(x => h('span', {class: 'detail'}, x))]},
  ], evs, 'No events yet.');
}

// taskBadge shows a task's state, in the failure colour when it failed.
export function taskBadge(ts) {
  return ts.Failed ? badge('failed', '(' + ts.State + ')') : badge(ts.State);
}

function taskCard(name, ts, taskDef, res, usage, newestFirst) {
  const r = res || {};
  const devices = (r.Devices || []).map(d => `${d.Vendor}/${d.Type}/${d.Name}: ${(d.DeviceIDs || []).join(', ')}`);
  const mem = usage && usage.ResourceUsage && usage.ResourceUsage.MemoryStats;
  const cpu = usage && usage.ResourceUsage && usage.ResourceUsage.CpuStats;
  return h('section', {class: 'task', 'aria-labelledby': 'task-' + name},
    h('h3', {id: 'task-' + name}, 'Task ', h('span', {class: 'id'}, name), ' ', taskBadge(ts)),
    kv([
      ['Driver', taskDef ? taskDef.Driver : null],
      ['Lifecycle', taskDef && taskDef.Lifecycle ? `${taskDef.Lifecycle.Hook}${taskDef.Lifecycle.Sidecar ? ' (sidecar)' : ''}` : null],
      ['Started', timeEl(fromRFC3339(ts.StartedAt))],
      ['Finished', fromRFC3339(ts.FinishedAt) ? timeEl(fromRFC3339(ts.FinishedAt)) : null],
      ['Restarts', ts.Restarts],
      ['Last restart', fromRFC3339(ts.LastRestart) ? timeEl(fromRFC3339(ts.LastRestart)) : null],
      ['CPU', r.Cpu ? mhz(r.Cpu.CpuShares) + (cpu && cpu.Measured ? ` (using ${cpu.Percent.toFixed(1)}%)` : '') : null],
      ['Memory', r.Memory ? mib(r.Memory.MemoryMB) + (r.Memory.MemoryMaxMB ? ` (max ${mib(r.Memory.MemoryMaxMB)})` : '') +
        (mem && mem.Measured ? ` (using ${mib(Math.round(mem.RSS / 1048576))} RSS)` : '') : null],
      ['Devices', devices.length ? devices.join('; ') : null],
    ]),
    h('h4', null, 'Events'), eventsTable(ts.Events, newestFirst));
}

// scoresTable lists how the nodes scored: the best-scoring nodes the
// scheduler considered, each with its scorers' components (ScoreMetaData),
// or, from a scheduler that records only those, the chosen node's
// components (Scores, by "<node ID>.<scorer>").
function scoresTable(metrics, chosen) {
  const m = metrics || {};
  if ((m.ScoreMetaData || []).length) {
    const rows = [...m.ScoreMetaData].sort((a, b) => b.NormScore - a.NormScore);
    return table('Node scores', [
      {label: 'Node', cell: r => [h('a', {href: nodeURL(r.NodeID), class: 'mono'}, shortID(r.NodeID)),
        r.NodeID === chosen ? h('span', {class: 'muted'}, ' (chosen)') : null]},
      {label: 'Score', cell: r => r.NormScore.toFixed(3), num: true},
      {label: 'Components', cell: r => Object.entries(r.Scores || {}).sort(([a], [b]) => a.localeCompare(b))
        .map(([k, v]) => h('span', {class: 'detail'}, `${k} ${v.toFixed(3)}`))},
    ], rows);
  }
  const rows = Object.entries(m.Scores || {}).map(([k, v]) => {
    const dot = k.indexOf('.');
    return {node: k.slice(0, dot), scorer: k.slice(dot + 1), score: v};
  }).sort((a, b) => b.score - a.score);
  return table('Node scores', [
    {label: 'Node', cell: r => h('a', {href: nodeURL(r.node), class: 'mono'}, shortID(r.node))},
    {label: 'Scorer', cell: r => r.scorer},
    {label: 'Score', cell: r => r.score.toFixed(3), num: true},
  ], rows, 'The scheduler recorded no scores.');
}

export function render(id) {
  const meta = h('div', {class: 'meta'}, h('p', {class: 'loading'}, 'Loading…'));
  const tasks = section('Tasks', 'tasks');
  const order = h('input', {type: 'checkbox', id: 'events-newest-first'});
  tasks.el.querySelector('h2').after(h('label', {class: 'inline-option'}, order, ' Newest events first'));
  const logs = section('Logs', 'logs');
  const placed = section('Placement', 'placement');
  let alloc = null;
  let usage = null;
  let logPanel = null; // the logs, once the allocation has tasks and a node

  const draw = () => {
    const a = alloc;
    if (!a) return;
    const job = a.Job || {};
    const tg = (job.TaskGroups || []).find(g => g.Name === a.TaskGroup) || {};
    const taskDef = n => (tg.Tasks || []).find(t => t.Name === n);
    const ds = a.DeploymentStatus;
    replace(meta, kv([
      ['ID', h('span', {class: 'mono'}, a.ID)],
      ['Client status', [badge(a.ClientStatus), a.ClientDescription ? ' ' + a.ClientDescription : '']],
      ['Desired', a.DesiredStatus + (a.DesiredDescription ? ': ' + a.DesiredDescription : '')],
      ['Job', h('a', {href: jobURL(a.JobID, a.Namespace)}, a.JobID)],
      ['Group', a.TaskGroup], ['Job version', job.Version],
      ['Node', a.NodeID ? h('a', {href: nodeURL(a.NodeID)}, a.NodeName || shortID(a.NodeID)) : null],
      ['Evaluation', a.EvalID ? h('a', {href: evalURL(a.EvalID), class: 'mono'}, shortID(a.EvalID)) : null],
      ['Deployment health', ds && ds.Healthy !== null && ds.Healthy !== undefined ? (ds.Healthy ? 'healthy' : 'unhealthy') : null],
      ['Previous allocation', a.PreviousAllocation ? h('a', {href: allocURL(a.PreviousAllocation), class: 'mono'}, shortID(a.PreviousAllocation)) : null],
      ['Next allocation', a.NextAllocation ? h('a', {href: allocURL(a.NextAllocation), class: 'mono'}, shortID(a.NextAllocation)) : null],
      ['Preempted by', a.PreemptedByAllocation ? h('a', {href: allocURL(a.PreemptedByAllocation), class: 'mono'}, shortID(a.PreemptedByAllocation)) : null],
      ['Reschedule attempts', a.RescheduleTracker && a.RescheduleTracker.Events ? a.RescheduleTracker.Events.length : null],
      ['Shared disk', a.AllocatedResources && a.AllocatedResources.Shared ? mib(a.AllocatedResources.Shared.DiskMB) : null],
      ['Created', timeEl(fromNanos(a.CreateTime))], ['Modified', timeEl(fromNanos(a.ModifyTime))],
    ]));
    const names = Object.keys(a.TaskStates || {});
    for (const t of tg.Tasks || []) if (!names.includes(t.Name)) names.push(t.Name);
    names.sort();
    const taskRes = (a.AllocatedResources && a.AllocatedResources.Tasks) || {};
    replace(tasks.body, names.length ? names.map(n => taskCard(n, (a.TaskStates || {})[n] || {State: 'pending'},
      taskDef(n), taskRes[n], usage && usage.Tasks && usage.Tasks[n], order.checked))
      : h('p', {class: 'empty'}, 'No tasks have reported yet.'));
    const m = a.Metrics || {};
    replace(placed.body, h('p', null,
      `The scheduler evaluated ${m.NodesEvaluated || 0} of ${m.NodesInPool || 0} nodes in the pool` +
      (m.NodesFiltered ? `, ${m.NodesFiltered} filtered out` : '') +
      (m.NodesExhausted ? `, ${m.NodesExhausted} without room` : '') +
      ', and placed this allocation on the best-scoring node.'), scoresTable(m, a.NodeID));
    if (!logPanel && names.length && a.NodeID) {
      const dead = n => ((alloc.TaskStates || {})[n] || {}).State === 'dead';
      logPanel = logView(a.ID, names, dead);
      replace(logs.body, logPanel.el);
      logPanel.start(signalOf);
    } else if (logPanel) {
      logPanel.update();
    }
  };
  order.addEventListener('change', draw);
  let signalOf = null;

  // Usage is not a blocking query: it is sampled every 5 seconds while
  // the allocation runs, and not asked for otherwise.
  let statsCtl = null;
  const syncStats = () => {
    const running = alloc && alloc.ClientStatus === 'running';
    if (running && !statsCtl && !signalOf.aborted) {
      statsCtl = new AbortController();
      watch(api(['client', 'allocation', id, 'stats']), data => {
        usage = data;
        draw();
      }, {signal: statsCtl.signal, blocking: false, period: 5000, quiet: true});
    } else if (!running && statsCtl) {
      statsCtl.abort();
      statsCtl = null;
      usage = null;
    }
  };

  return page('Allocation ' + shortID(id), h('div', null, h('h1', null, 'Allocation ', h('span', {class: 'id'}, shortID(id))), meta),
    [tasks, logs, placed], signal => {
      signalOf = signal;
      watch(api(['allocation', id]), data => {
        alloc = data;
        document.title = `Allocation ${data.Name} · Drover`;
        draw();
        syncStats();
      }, {signal, onError: err => failed(meta, err, `Allocation "${id}"`)});
      signal.addEventListener('abort', () => statsCtl && statsCtl.abort(), {once: true});
    });
}
