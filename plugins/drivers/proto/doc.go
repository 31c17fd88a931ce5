// Package proto holds the driver plugin wire protocol (driver.proto) and the
// Go code generated from it. The generated files are committed so that a
// build needs no protoc; regenerate with `go generate` in this directory
// after changing driver.proto.
//
// Where it sits in the data flow: the agent's driver manager talks to an
// external driver plugin through plugins/drivers/grpcdriver, which converts
// between these messages and the SDK's values in plugins/drivers.
package proto
