// Formatting of times, sizes, IDs and statuses, as the CLI prints them.

// fromNanos turns Unix nanoseconds (the API's CreateTime, ModifyTime, event
// Time) into a Date; 0 and missing are null.
export function fromNanos(ns) {
  if (!ns) return null;
  return new Date(ns / 1e6);
}

// fromRFC3339 turns an RFC 3339 time into a Date; Go's zero time is null.
export function fromRFC3339(s) {
  if (!s || s.startsWith('0001-01-01')) return null;
  const d = new Date(s);
  return isNaN(d) ? null : d;
}

// relative says how long ago (or from now) d is: "12s ago", "3m ago",
// "in 5s".
export function relative(d, now = Date.now()) {
  if (!d) return '—';
  const secs = Math.round((now - d.getTime()) / 1000);
  const abs = Math.abs(secs);
  let text;
  if (abs < 5) return 'just now';
  if (abs < 60) text = abs + 's';
  else if (abs < 3600) text = Math.floor(abs / 60) + 'm';
  else if (abs < 86400) text = Math.floor(abs / 3600) + 'h' + (abs < 36000 ? ' ' + Math.floor((abs % 3600) / 60) + 'm' : '');
  else text = Math.floor(abs / 86400) + 'd';
  return secs >= 0 ? text + ' ago' : 'in ' + text;
}

// timeEl is a <time> showing d relative to now (kept fresh by
// refreshTimes) with the exact local time as its title.
export function timeEl(d) {
  if (!d) return '—';
  const el = document.createElement('time');
  el.dateTime = d.toISOString();
  el.title = d.toLocaleString();
  el.dataset.rel = '';
  el.textContent = relative(d);
  return el;
}

// refreshTimes updates every relative <time> under root.
export function refreshTimes(root = document) {
  const now = Date.now();
  for (const el of root.querySelectorAll('time[data-rel]')) {
    el.textContent = relative(new Date(el.dateTime), now);
  }
}

// clock is d's local time of day with milliseconds: "17:03:49.011".
export function clock(d) {
  if (!d) return '—';
  const p = (n, w = 2) => String(n).padStart(w, '0');
  return `${p(d.getHours())}:${p(d.getMinutes())}:${p(d.getSeconds())}.${p(d.getMilliseconds(), 3)}`;
}

// duration renders nanoseconds as "1.5s", "2m30s", "1h0m".
export function duration(ns) {
  if (ns === null || ns === undefined) return '—';
  const ms = ns / 1e6;
  if (ms < 1000) return Math.round(ms) + 'ms';
  const s = ms / 1000;
  if (s < 60) return (Math.round(s * 10) / 10) + 's';
  const m = Math.floor(s / 60);
  if (m < 60) return m + 'm' + Math.round(s % 60) + 's';
  return Math.floor(m / 60) + 'h' + (m % 60) + 'm';
}

// since is the time from a to b as "+1.234s".
export function since(a, b) {
  if (!a || !b) return '';
  const ms = b.getTime() - a.getTime();
  return '+' + (ms / 1000).toFixed(3) + 's';
}

// mib renders megabytes: "64 MiB", "23.5 GiB".
export function mib(n) {
  if (n === null || n === undefined) return '—';
  if (n >= 1024 * 1024) return (n / 1024 / 1024).toFixed(1) + ' TiB';
  if (n >= 1024) return (n / 1024).toFixed(1) + ' GiB';
  return n + ' MiB';
}

// mhz renders CPU shares: "100 MHz", "5.2 GHz".
export function mhz(n) {
  if (n === null || n === undefined) return '—';
  if (n >= 1000) return (n / 1000).toFixed(1) + ' GHz';
  return n + ' MHz';
}

// shortID is the first 8 characters of an ID, as the CLI shows it.
export function shortID(id) {
  return id ? id.slice(0, 8) : '';
}

// badge shows a status word in its colour class.
export function badge(status, extra) {
  const el = document.createElement('span');
  el.className = 'badge status-' + String(status || 'unknown').replace(/[^a-z-]/gi, '-').toLowerCase();
  el.textContent = (status || 'unknown') + (extra ? ' ' + extra : '');
  return el;
}

// plural is "1 node" or "3 nodes".
export function plural(n, word, many) {
  return n + ' ' + (n === 1 ? word : (many || word + 's'));
}
