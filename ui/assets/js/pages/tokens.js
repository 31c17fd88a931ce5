// The ACL token: the secret ID the UI sends as X-Nomad-Token, kept in this
// browser's local storage only. A one-time token in the address
// (/ui/settings/tokens?ott=SECRET, as `acl token` hands one to a browser)
// is exchanged for its token, which is then saved.

import {h, kv, message, replace} from '../dom.js';
import {APIError, describe, get, notAvailable, put, setToken, token} from '../api.js';
import {page} from './common.js';

// aclDisabled reports whether err says that the agent runs without ACLs.
function aclDisabled(err) {
  return err instanceof APIError && err.status === 400 && /ACL support disabled/i.test(err.message);
}

export function render() {
  const input = h('input', {type: 'password', id: 'token-secret', autocomplete: 'off', spellcheck: 'false',
    size: 40, value: token(), 'aria-describedby': 'token-help'});
  const result = h('div', {role: 'status', id: 'token-status'});
  const changed = () => window.dispatchEvent(new Event('drover-token'));
  const check = async () => {
    const ott = new URLSearchParams(location.search).get('ott');
    if (ott) {
      try {
        const {data} = await put('/v1/acl/token/onetime/exchange', {OneTimeSecretID: ott});
        setToken(data.Token.SecretID);
        history.replaceState(null, '', location.pathname);
        input.value = data.Token.SecretID;
        changed();
        return;
      } catch (err) {
        replace(result, message('error', 'The one-time token could not be exchanged (used, expired or unknown): ', describe(err)));
        return;
      }
    }
    if (!token()) {
      replace(result, message('info', 'No token is set: requests are anonymous, and get only what the anonymous policy grants.'));
      return;
    }
    try {
      const {data} = await get('/v1/acl/token/self');
      const roles = (data.Roles || []).map(r => r.Name).join(', ');
      replace(result, message('info', 'Signed in: the agent accepts this token.'),
        kv([['Name', data.Name], ['Accessor ID', data.AccessorID], ['Type', data.Type],
          ['Policies', data.Type === 'management' ? 'all (management)' : (data.Policies || []).join(', ') || null],
          ['Roles', roles || null], ['Expires', data.ExpirationTime || 'never']]));
    } catch (err) {
      if (aclDisabled(err) || notAvailable(err)) {
        replace(result, message('info', 'ACLs are not enabled on this agent: every request is served, and the token is sent and ignored.'));
      } else if (err instanceof APIError && err.status === 403) {
        replace(result, message('error', `The agent refused this token: ${err.message}. Check the secret ID, or ask for a new token.`));
      } else {
        replace(result, message('error', describe(err)));
      }
    }
  };
  const form = h('form', {class: 'token-form', onsubmit: e => {
    e.preventDefault();
    setToken(input.value.trim());
    changed();
  }},
  h('label', {for: 'token-secret'}, 'Secret ID'), ' ', input, ' ',
  h('button', {type: 'submit'}, 'Sign in'), ' ',
  h('button', {type: 'button', onclick: () => {
    input.value = '';
    setToken('');
    changed();
  }}, 'Sign out'));
  return page('ACL token', h('h1', null, 'ACL token'), [
    h('p', {id: 'token-help'}, 'With ACLs enabled, the agent serves only what a token grants. Sign in with the secret ID of a token ' +
      '(from `acl bootstrap`, `acl token create` or `acl login`): the UI sends it as X-Nomad-Token with every request, ' +
      'as the CLI sends NOMAD_TOKEN. It is stored in this browser only.'),
    form, result,
  ], () => check());
}
