// Package devicetest is the test harness of the device plugin SDK: Serve
// runs a device.DevicePlugin behind the real gRPC transport on an in-memory
// connection, so a test talks to it exactly as the agent talks to an
// external plugin; Plugin is a scriptable plugin for tests of the code that
// consumes device plugins (the client's device manager).
//
// Where it sits in the data flow: only in tests, between a plugin and
// plugins/device/grpcdevice or client/devicemanager.
package devicetest
