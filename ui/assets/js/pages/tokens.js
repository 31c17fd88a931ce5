// The ACL token: the secret ID the UI sends as X-Nomad-Token, kept in this
// browser's local storage only.

import {h, kv, message, replace} from '../dom.js';
import {get, notAvailable, describe, setToken, token} from '../api.js';
import {page} from './common.js';

export function render() {
  const input = h('input', {type: 'password', id: 'token-secret', autocomplete: 'off', spellcheck: 'false',
    size: 40, value: token(), 'aria-describedby': 'token-help'});
  const result = h('div', {role: 'status'});
  const check = async () => {
    if (!token()) {
      replace(result, message('info', 'No token is set: requests are anonymous.'));
      return;
    }
    try {
      const {data} = await get('/v1/acl/token/self');
      replace(result, message('info', 'The agent accepts this token.'),
        kv([['Name', data.Name], ['Type', data.Type], ['Policies', (data.Policies || []).join(', ') || null]]));
    } catch (err) {
      replace(result, notAvailable(err)
        ? message('info', 'This agent has no ACL system yet: the token is sent with every request and ignored.')
        : message('error', describe(err)));
    }
  };
  const form = h('form', {class: 'token-form', onsubmit: e => {
    e.preventDefault();
    setToken(input.value.trim());
    window.dispatchEvent(new Event('drover-token'));
  }},
  h('label', {for: 'token-secret'}, 'Secret ID'), ' ', input, ' ',
  h('button', {type: 'submit'}, 'Save'), ' ',
  h('button', {type: 'button', onclick: () => {
    input.value = '';
    setToken('');
    window.dispatchEvent(new Event('drover-token'));
  }}, 'Clear'));
  return page('ACL token', h('h1', null, 'ACL token'), [
    h('p', {id: 'token-help'}, 'The UI sends this token as X-Nomad-Token with every request, as the CLI sends NOMAD_TOKEN. ' +
      'It is stored in this browser only.'),
    form, result,
  ], () => check());
}
