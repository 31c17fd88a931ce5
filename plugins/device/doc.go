// Package device is the device plugin SDK: the interface every device plugin
// implements (the built-in ones in devices/, third-party ones as external
// plugins), the values that cross it, and the checks the client applies to
// what a plugin says.
//
// Where it sits in the data flow: the client's device manager
// (client/devicemanager) consumes each plugin's Fingerprint stream and turns
// its device groups into the node's NodeResources.Devices, which the
// scheduler places device requests against; when a task that was given
// device instances starts, the task runner's device hook calls Reserve on the
// plugin owning them and hands the returned environment, mounts and device
// nodes to the driver; the Stats stream feeds the client's task, alloc and
// node statistics.
//
// Plugins are not trusted: Validate* in this package are what the device
// manager applies before anything a plugin said reaches the node or a task.
//
// This package must not import drover's structs: it is the SDK's boundary.
package device
