// Package taskapi serves the task API: a Unix socket in each task's
// secrets directory (secrets/api.sock, NOMAD_UNIX_ADDR) that forwards
// HTTP requests carrying a token to the agent's HTTP API, so that a task
// whose network cannot reach the agent still can (Nomad's Task API; see
// docs/identity.md).
//
// Where it sits in the data flow: the client owns one Server for all its
// tasks; each task runner's task API hook (client/allocrunner/taskrunner)
// asks it to listen on the task's socket before the task starts and to
// stop when the runner is done. One goroutine waits on every socket at
// once (epoll) and one http.Server serves the connections they accept, so
// that a running task costs no goroutine here: 1,000 tasks would
// otherwise park 1,000 accept loops for sockets that are rarely used.
package taskapi
