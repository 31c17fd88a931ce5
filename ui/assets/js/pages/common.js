// What every page shares: its frame and how it reports a failed read.

import {h, replace, message} from '../dom.js';
import {describe, forbidden, notAvailable, notFound} from '../api.js';

// page is a page's frame: a heading and its sections; start begins the
// page's live updates (and is given the signal that ends them).
export function page(title, heading, sections, start) {
  const el = h('div', {class: 'page'}, heading, sections.map(s => s.el || s));
  return {title, el, start};
}

// failed shows err in body in words: a missing object, a missing
// endpoint, an ACL refusal or another failure. It returns true when
// retrying cannot help (the watch then ends).
export function failed(body, err, what) {
  if (notFound(err)) {
    replace(body, message('warn', `${what} was not found: it may have been garbage-collected, or the ID is wrong.`));
    return true;
  }
  if (notAvailable(err)) {
    replace(body, message('info', `Not available on this agent: its API has no ${err.path.split('?')[0]}.`));
    return true;
  }
  if (forbidden(err)) {
    replace(body, message('error', describe(err), ' ', h('a', {href: '/ui/settings/tokens', class: 'sign-in'}, 'Sign in with an ACL token.')));
    return false;
  }
  // A failure while data is shown leaves the data (the footer says that
  // updates paused); one before any data replaces the loading line.
  if (body.querySelector('.loading')) replace(body, message('error', 'Could not load: ', describe(err)));
  return false;
}
