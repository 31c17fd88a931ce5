// Package acl is drover's access control language: it parses policy
// documents written in Nomad's rule language (namespace, variables,
// host_volume, node, agent, operator, quota and plugin rules), merges a
// token's policies into an ACL, and answers whether that ACL grants a
// capability. It declares Requirement, the one value each HTTP route
// (package httpapi) and each RPC method (package rpcapi) carries to say
// what its caller needs.
//
// Where it sits: the server stores policies and tokens (server/state);
// the agent resolves a request's token to an ACL (cached, by raft index)
// and checks the route's or method's Requirement before the handler runs.
// This package is pure: no I/O, no goroutines, no clock.
package acl
