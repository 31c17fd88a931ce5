// Package proto holds the device plugin wire protocol (device.proto) and the
// Go code generated from it. The generated files are committed so that a
// build needs no protoc; regenerate with `go generate` in this directory
// after changing device.proto.
//
// Where it sits in the data flow: the client's device manager talks to an
// external device plugin through plugins/device/grpcdevice, which converts
// between these messages and the SDK's values in plugins/device.
package proto
