// Package rpcapi declares the server's API once: every method a caller may
// invoke on a server (its name, request and response types, and whether it
// is safe to send again), and the wire protocol that carries the calls
// between agents.
//
// Where it sits in the data flow: the HTTP API (package httpapi), the
// client (node registration, heartbeats, the blocking query for its
// allocations, their state updates) and a client-only agent all call the
// server through a Conn: the server itself in process (*server.Server, a
// Conn through its Handlers), or rpcclient.Client over the agent's RPC
// port (4647), with failover between servers. The server binds each
// declared method to its implementation with Handle; NewHTTPHandler serves
// those over the network.
//
// A method is a typed descriptor (methods.go):
//
//	resp, err := rpcapi.JobGet.Call(ctx, conn, &structs.JobSpecificRequest{JobID: "web"})
//
// Its name appears nowhere else; request and response types are checked at
// compile time on both sides. Each method has a Class (method.go): reads
// and idempotent writes may be sent again after any failure; deduplicated
// writes carry a request ID (structs.WriteRequest) that the server
// remembers in its replicated state, so that a repeat is answered with the
// first reply and applied no more; at-most-once writes are sent again only
// when the first attempt never reached a server.
//
// The wire (wire.go): POST /rpc/v1/<Method> with Content-Type
// application/msgpack; the body is the request struct, msgpack-encoded
// with "codec" struct tags only (a node's SecretID, hidden from JSON, must
// cross). A success is 200 with the response struct; a failure is a
// non-200 status with an ErrorBody whose Kind is the structs.ErrorKind's
// name, so that the caller sees KindNotFound as KindNotFound. Cancelling
// the caller's context ends the call on the server too (a blocking query
// returns).
//
// Access control (acl.go): every method declares what its caller must be
// granted (Info.Requirement); the caller's ACL token travels in the
// context (WithAuthToken) and on the wire as X-Nomad-Token, and the server
// checks it once, in its middleware, for calls that arrived over the wire
// (Remote).
//
// rpcapi imports only structs and acl of drover's: the server, the client
// and the HTTP API import it, never each other.
package rpcapi
