// Package drivers is the driver plugin SDK: the interface every task driver
// implements (built-in ones in drivers/, third-party ones as external
// plugins), and the values that cross it.
//
// Where it sits in the data flow: a TaskRunner (client/allocrunner/taskrunner)
// builds a TaskConfig and, through the client's driver manager
// (client/drivermanager; over gRPC, plugins/drivers/grpcdriver, for an
// external plugin), calls StartTask, persists the returned TaskHandle so a
// restarted agent can RecoverTask, and waits on WaitTask for the ExitResult.
//
// Drivers are not trusted: the client selects on its own context in every
// wait, and validates what a driver returns.
//
// This package must not import drover's structs: it is the SDK's boundary.
package drivers
