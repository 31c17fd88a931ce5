// Package tlsutil builds the *tls.Config values of an agent's TLS (the
// agent configuration's tls block) and makes the certificates that
// `drover tls ca create` and `drover tls cert create` write.
//
// Where it sits in the data flow: the agent loads its tls block into a
// Configurator, which reads ca_file, cert_file and key_file and hands out
// configs for each listener and dialer: the HTTP API (HTTPServer), the RPC
// port's incoming connections (RPCServer, mutual TLS: the caller must show
// a certificate signed by the CA) and the agent's own calls to servers
// (RPCClient: client RPCs, forwarding between servers, raft). Every config
// reads the current certificate, key and CA at each handshake, so Reload
// (the agent calls it on SIGHUP) swaps them without restarting a listener.
//
// Names: a server's certificate says server.<region>.nomad, a client's
// client.<region>.nomad, the CLI's cli.<region>.nomad, as Nomad's. With
// verify_server_hostname an agent calling a server checks that name, and a
// server accepts RPC callers that are servers or clients of its region
// only.
//
// Client configs share one session cache (ClientSessionCache), so that an
// agent reconnecting to a server resumes its TLS session instead of a full
// handshake.
//
// tlsutil imports nothing of drover's: the agent, the server, the client's
// RPC client and the CLI all use it.
package tlsutil
