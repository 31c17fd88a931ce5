// Package e2e holds end-to-end tests: they build the real drover binary,
// start agents as subprocesses on free ports with their own data
// directories (`drover agent -dev`, and persistent agents from config files:
// combined, server-only and client-only, which the survival tests kill -9
// and restart), and drive them with the CLI and with API clients (drover's
// and Nomad's), the way users and their scripts do.
//
// Where it sits in the data flow: outside it, watching the whole path of a
// job, from `drover job run` through server, scheduler, client and driver
// back to `drover alloc status`.
package e2e
