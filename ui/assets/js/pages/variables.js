// Variables: their paths in every namespace, and one variable's keys with
// each value hidden until asked for (as one hides a password on screen).

import {h, kv, replace, section, table} from '../dom.js';
import {fromNanos, timeEl} from '../format.js';
import {watch} from '../api.js';
import {api, namespace, varURL} from '../paths.js';
import {page, failed} from './common.js';

// render is /ui/variables or, with a path, /ui/variables/var/:path.
export function render(path) {
  return path ? one(path) : list();
}

function list() {
  const body = section('Variables', 'variables', {hideTitle: true});
  return page('Variables', h('h1', null, 'Variables'), [body], signal => {
    watch('/v1/vars?namespace=*', data => replace(body.body, table('Variables', [
      {label: 'Path', cell: v => h('a', {href: varURL(v.Path, v.Namespace)}, h('code', null, v.Path))},
      {label: 'Namespace', cell: v => v.Namespace},
      {label: 'Modified', cell: v => timeEl(fromNanos(v.ModifyTime))},
    ], [...(data || [])].sort((a, b) => a.Path.localeCompare(b.Path) || a.Namespace.localeCompare(b.Namespace)),
    'No variables: write one with drover var put <path> key=value.')),
    {signal, onError: err => failed(body.body, err, 'The variable list')});
  });
}

// secret is a value shown as dots until its button is pressed.
function secret(key, value) {
  const shown = h('code', {class: 'secret', 'data-key': key}, '••••••••');
  const button = h('button', {type: 'button', class: 'reveal', 'aria-pressed': 'false',
    'aria-label': `Show the value of ${key}`}, 'Show');
  button.addEventListener('click', () => {
    const show = button.getAttribute('aria-pressed') !== 'true';
    button.setAttribute('aria-pressed', String(show));
    button.textContent = show ? 'Hide' : 'Show';
    button.setAttribute('aria-label', `${show ? 'Hide' : 'Show'} the value of ${key}`);
    replace(shown, show ? value : '••••••••');
  });
  return h('span', {class: 'secret-wrap'}, shown, ' ', button);
}

function one(path) {
  const ns = namespace();
  const meta = h('div', {class: 'meta'}, h('p', {class: 'loading'}, 'Loading…'));
  const items = section('Keys', 'items');
  return page('Variable ' + path, h('div', null, h('h1', null, 'Variable ', h('code', {class: 'id'}, path)), meta),
    [items], signal => {
      watch(api(['var', ...path.split('/')], {namespace: ns}), v => {
        replace(meta, kv([
          ['Namespace', v.Namespace], ['Modify index', v.ModifyIndex],
          ['Created', timeEl(fromNanos(v.CreateTime))], ['Modified', timeEl(fromNanos(v.ModifyTime))],
          ['Lock', v.Lock ? 'held' : null],
        ]));
        const keys = Object.keys(v.Items || {}).sort();
        replace(items.body, table('Keys', [
          {label: 'Key', cell: k => h('code', null, k)},
          {label: 'Value', cell: k => secret(k, v.Items[k])},
        ], keys, 'No keys.'));
      }, {signal, onError: err => {
        const done = failed(meta, err, `Variable "${path}"`);
        if (done) replace(items.body);
        return done;
      }});
    });
}
