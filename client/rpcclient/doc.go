// Package rpcclient calls a server's methods over the network: Client is
// an rpcapi.Conn over the agent RPC ports of the configured servers.
//
// Where it sits in the data flow: a client-only agent's client.Client
// registers its node, heartbeats, watches its allocations (a blocking
// query) and reports their state through it, and its HTTP API calls the
// servers through it too. Each call is one of rpcapi's declared methods,
// sent with rpcapi's wire protocol (rpcapi.Transport: a msgpack POST to
// http://<server>/rpc/v1/<Method>, served by server.RPCServer). This
// package adds the policy: failover between the servers, with backoff,
// when one is unreachable or unavailable, and retries of only what is safe
// to send again (the method's rpcapi.Class; a deduplicated write gets its
// request ID here, the same for every attempt). A failed call's
// structs.ErrorKind crosses the wire: KindOf on the returned error gives
// the server's kind.
package rpcclient
