// Package api is the Go client of drover's HTTP API. Its request and
// response types are the wire format, which is Nomad's: a Nomad API client
// works against drover and this client works against Nomad for the endpoints
// both implement.
//
// Where it sits in the data flow: the CLI (command/) and the job file parser
// (jobspec/) produce and consume these types; the agent (agent/) decodes
// requests into them and converts them to structs.
//
// api imports nothing else of drover's, so third parties can use it alone.
package api
