// Package grpcdevice carries the device plugin SDK (plugins/device) over
// gRPC: Server serves a device.DevicePlugin in a plugin process, Client is
// the agent's side and implements device.DevicePlugin itself, and Plugin
// binds both to hashicorp/go-plugin.
//
// Where it sits in the data flow: the client's device manager launches an
// external device plugin with plugins.LaunchDevice and uses the Client it
// gets exactly like a built-in plugin; errors keep their kind across the wire
// (device.ErrUnknownDevice, context errors), and a plugin process that went
// away surfaces as device.ErrPluginUnavailable.
//
// The base calls' messages (plugins/base/proto), their conversions, the
// status mapping and the stream helpers are shared with grpcdriver in
// plugins/base/grpcbase; this package adds the device plugin's own.
package grpcdevice
