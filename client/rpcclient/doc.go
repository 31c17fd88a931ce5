// Package rpcclient is the client side of the client RPCs over the
// network: a client.RPC that calls a server agent's RPC port.
//
// Where it sits in the data flow: a client-only agent's client.Client
// registers its node, heartbeats, watches its allocations (a blocking
// query) and reports their state through this package, which POSTs
// msgpack bodies to http://<server>/rpc/v1/<Method> (served by
// server.RPCServer) and fails over between the configured servers, with
// backoff, when one is unreachable or unavailable. A failed call's
// structs.ErrorKind crosses the wire: KindOf on the returned error gives
// the server's kind.
package rpcclient
