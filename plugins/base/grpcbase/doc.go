// Package grpcbase holds what the plugin transports over gRPC have in
// common: the conversions of the base plugin calls' values (plugins/base)
// to and from their wire messages (plugins/base/proto), the shared
// scalar conversions, the mapping of errors to gRPC statuses and back, and
// the server-stream helpers.
//
// Where it sits in the data flow: the agent's driver and device managers
// reach plugin processes through plugins/drivers/grpcdriver and
// plugins/device/grpcdevice; both use this package for the base calls and
// for their streams. What differs between the transports (their error
// kinds, their ErrorDetail message) stays with them and is passed in.
package grpcbase
