// Package structs holds the domain types shared by the server and the client:
// jobs, allocations, nodes, evaluations and the request/response types of the
// internal RPCs between them.
//
// Where it sits in the data flow: the agent converts an api.Job into a
// structs.Job, the server stores and schedules structs values, and the client
// receives *Allocation values. Values read from the state store or received by
// the client are read-only; change one only after Copy().
//
// The JSON encoding of these types is Nomad's HTTP wire format (field names are
// the Go field names), so HTTP handlers encode them directly.
//
// structs imports nothing else of drover's.
package structs
