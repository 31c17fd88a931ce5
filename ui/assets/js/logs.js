// Live logs: a task's stdout or stderr, followed as it is written, from
// GET /v1/client/fs/logs/:alloc?follow=true&plain=true (forwarded by the
// agent to the node that runs the allocation).

import {h, replace, message} from './dom.js';
import {APIError, backoff, describe, headers, sleep} from './api.js';

// tailBytes is how much of the log's end is shown when a stream opens.
const tailBytes = 64 * 1024;
// keepChars bounds the text kept on the page; older text is dropped.
const keepChars = 512 * 1024;

// logView returns {el, start(signal)} for the tasks of allocation allocID.
// taskDead(name) says whether a task has finished, so that a stream that
// ends for it is not reopened.
export function logView(allocID, tasks, taskDead) {
  let task = tasks[0];
  let type = 'stdout';
  let ctl = null; // aborts the open stream
  let pageSignal = null;

  const pre = h('pre', {class: 'log', id: 'log', tabindex: '0', 'aria-label': 'Log output'});
  const note = h('p', {class: 'log-note', role: 'status'});
  const follow = h('input', {type: 'checkbox', id: 'log-follow', checked: true});
  const buttons = ['stdout', 'stderr'].map(t => h('button', {
    type: 'button', 'aria-pressed': String(t === type), 'data-type': t,
    onclick: () => {
      type = t;
      for (const b of buttons) b.setAttribute('aria-pressed', String(b.dataset.type === type));
      restart();
    },
  }, t));
  const select = tasks.length > 1 ? h('select', {'aria-label': 'Task', onchange: e => {
    task = e.target.value;
    restart();
  }}, tasks.map(t => h('option', {value: t}, t))) : null;

  const el = h('div', {class: 'logs'},
    h('div', {class: 'log-controls', role: 'toolbar', 'aria-label': 'Log controls'},
      select ? h('label', null, 'Task ', select) : h('span', null, 'Task ', h('strong', null, task)),
      h('span', {class: 'segmented', role: 'group', 'aria-label': 'Stream'}, buttons),
      h('label', null, follow, ' Follow new lines')),
    pre, note);

  const write = text => {
    const atEnd = pre.scrollTop + pre.clientHeight >= pre.scrollHeight - 4;
    let node = pre.firstChild;
    if (!node) {
      node = document.createTextNode('');
      pre.append(node);
    }
    node.appendData(text);
    if (node.length > keepChars) node.deleteData(0, node.length - keepChars);
    if (follow.checked || atEnd) pre.scrollTop = pre.scrollHeight;
  };

  function restart() {
    if (ctl) ctl.abort();
    if (!pageSignal || pageSignal.aborted) return;
    ctl = new AbortController();
    pageSignal.addEventListener('abort', () => ctl.abort(), {once: true});
    replace(pre);
    replace(note, 'Connecting…');
    stream(task, type, ctl.signal);
  }

  async function stream(task, type, signal) {
    let failures = 0;
    let offset = tailBytes;
    while (!signal.aborted) {
      // A finished task's log is read to its end, not followed.
      const follow = !taskDead(task);
      const q = new URLSearchParams({task, type, plain: 'true', origin: 'end', offset: String(offset)});
      if (follow) q.set('follow', 'true');
      try {
        const resp = await fetch(`/v1/client/fs/logs/${encodeURIComponent(allocID)}?${q}`,
          {headers: headers(), signal, cache: 'no-store'});
        if (!resp.ok) throw new APIError(resp.status, (await resp.text()).trim(), `logs of task "${task}"`);
        following = follow;
        replace(note, follow ? `Following ${type} of task "${task}".` : `Reading ${type} of task "${task}"…`);
        failures = 0;
        const reader = resp.body.pipeThrough(new TextDecoderStream()).getReader();
        for (;;) {
          const {value, done} = await reader.read();
          if (done) break;
          write(value);
        }
      } catch (err) {
        if (signal.aborted || err.name === 'AbortError') return;
        failures++;
        const wait = backoff(failures);
        replace(note, message('warn', `No logs yet (${describe(err)}). Retrying in ${Math.ceil(wait / 1000)}s.`));
        await sleep(wait, signal);
        continue;
      }
      if (!follow || taskDead(task)) {
        if (!pre.textContent) replace(pre, `(no ${type} output)`);
        replace(note, `Task "${task}" has finished; this is the end of its ${type}` +
          (pre.textContent.length >= tailBytes ? ` (the last ${tailBytes / 1024} KiB).` : '.'));
        return;
      }
      // The stream closed while the task runs (the agent restarted, a
      // proxy timed out): go on from the end, without repeating lines.
      offset = 0;
      failures++;
      replace(note, 'The log stream closed; reconnecting…');
      await sleep(backoff(failures), signal);
    }
  }

  let following = false; // the open stream follows a running task
  return {
    el,
    start(signal) {
      pageSignal = signal;
      restart();
    },
    // update is called when the allocation changes: a followed task that
    // has finished writes no more (the stream stays open for the last
    // lines the agent has not sent yet).
    update() {
      if (following && taskDead(task)) {
        following = false;
        replace(note, `Task "${task}" has finished; its ${type} ends here.`);
      }
    },
  };
}
