// Package template renders a task's template blocks with consul-template
// (github.com/hashicorp/consul-template, MPL-2.0), the library Nomad's
// templates use, so that templates render as they do in Nomad.
//
// Where it sits in the data flow: the task runner's template hook
// (client/allocrunner/taskrunner) makes a Manager per task before the
// task's first start. The Manager runs one consul-template runner per
// template; each runner's Nomad client talks, through an in-memory
// connection that never leaves the agent (no socket a task could reach),
// to this package's Handler: a Nomad-compatible HTTP API restricted to
// what the task may read. Variables (GET /v1/var/:path, /v1/vars) are read
// from the servers over the agent's RPC connection, with the node's
// identity, and only at the paths a task may read without ACL policies
// (structs.WorkloadMayReadVariable: nomad/jobs, nomad/jobs/<job>,
// nomad/jobs/<job>/<group>, nomad/jobs/<job>/<group>/<task>, in the
// task's namespace). Services (GET /v1/services, /v1/service/:name) are
// forwarded to the agent's own HTTP API, in the task's namespace.
//
// Rendered files are written beneath the task's directory without
// following links (drivers/shared/beneath), and only when their content
// changes: a render after an agent restart that produces what is already
// on disk is no change, so the task is not restarted (Nomad #10920).
package template
