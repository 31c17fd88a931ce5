// Package grpcdriver carries a drivers.DriverPlugin over gRPC: Server wraps
// a driver in a plugin process, Client implements drivers.Plugin (and
// drivers.EventsPlugin) in the agent by calling it, and Plugin binds both to
// hashicorp/go-plugin.
//
// Where it sits in the data flow: the agent's driver manager launches an
// external driver (plugins.Launch), gets a *Client, and hands it to task
// runners as any other drivers.DriverPlugin; each call crosses
// plugins/drivers/proto to the Server in the plugin process, which calls
// the real driver.
//
// Errors keep their kind across the wire (drivers.ErrTaskNotFound,
// drivers.ErrNotSupported, drivers.RecoverableError, context errors), and a
// plugin that went away yields errors wrapping drivers.ErrPluginUnavailable
// rather than hangs. Streams (Fingerprint, WaitTask, TaskStats, TaskEvents)
// stop when the caller's context is done, which cancels the call in the
// plugin too.
//
// The base calls' messages (plugins/base/proto), their conversions, the
// status mapping and the stream helpers are shared with grpcdevice in
// plugins/base/grpcbase; this package adds the driver's own.
package grpcdriver
