// Package logmonitor fans the agent's log records out to live subscribers:
// `drover monitor` and GET /v1/agent/monitor.
//
// Where it sits in the data flow: the agent wraps its logger's handler
// with Monitor.Handler, so every record still goes where the agent's
// configuration sends it (stderr, log_file, syslog, at log_level), and
// also to each subscriber that wants its level, formatted for that
// subscriber (Nomad's text lines or JSON objects). A subscriber asking
// for a lower level than log_level gets those records too: the handler is
// enabled at the lowest level anyone wants.
//
// Loggers never wait for subscribers: each has a bounded buffer of lines,
// and a line that does not fit is dropped and counted, for the subscriber
// to report (TakeDropped).
package logmonitor
