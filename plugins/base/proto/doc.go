// Package proto holds the messages of the base plugin calls (base.proto)
// that the driver and device plugin services share, and the Go code
// generated from them. The generated files are committed so that a build
// needs no protoc; regenerate with `go generate` in this directory after
// changing base.proto, then regenerate the services that import it.
//
// Where it sits in the data flow: the agent's plugin managers call a
// plugin's PluginInfo, ConfigSchema and SetConfig through the transports
// (plugins/drivers/grpcdriver, plugins/device/grpcdevice); both convert
// between these messages and plugins/base with plugins/base/grpcbase.
package proto
