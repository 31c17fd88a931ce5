// Package e2e holds end-to-end tests: they build the real drover binary,
// start `drover agent -dev` as a subprocess on a free port with its own data
// directory, and drive it with the CLI and with API clients (drover's and
// Nomad's), the way users and their scripts do.
//
// Where it sits in the data flow: outside it, watching the whole path of a
// job, from `drover job run` through server, scheduler, client and driver
// back to `drover alloc status`.
package e2e
