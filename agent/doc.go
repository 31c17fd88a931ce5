// Package agent is the drover agent: the process that runs a server, a
// client (node agent) or both, and serves the HTTP API.
//
// Where it sits in the data flow: a job arrives as JSON on the HTTP API
// (Nomad-compatible, port 4646), is decoded into an api.Job, converted into
// a structs.Job here (convert.go) and handed to the server's RPC methods.
// Reads (jobs, allocations, evaluations, nodes) are the server's blocking
// queries, rendered in Nomad's JSON shapes.
//
// Files: agent.go wires a dev agent (server + client + drivers in one
// process); command.go is the `drover agent` command; convert.go turns
// submitted jobs into domain jobs; http*.go hold the HTTP server, its
// router, its request helpers and one file of handlers per resource.
package agent
