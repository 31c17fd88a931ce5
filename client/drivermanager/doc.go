// Package drivermanager runs the node's task drivers for the client: the
// built-in ones in process, and external driver plugins found in the
// agent's plugin_dir as separate processes.
//
// Where it sits in the data flow: the agent passes the driver catalog
// (name -> constructor), the plugin configs (plugin "NAME" { config {...} })
// and plugin_dir; the client creates the Manager and Starts it before it
// restores allocations. The Manager
//
//   - configures every driver, validating its config block against the
//     driver's schema (a bad block fails Start with an error naming the
//     plugin and the field);
//   - consumes each driver's fingerprint stream and hands the client a
//     structs.DriverInfo on every change, which the client copies into its
//     node (Drivers[name], attributes driver.NAME and driver.NAME.version)
//     and sends to the servers;
//   - persists each external plugin's re-attach config in the client's
//     StateDB, so a restarted agent re-attaches to the plugin processes
//     that still run instead of launching new ones;
//   - restarts a crashed external plugin with exponential backoff, marking
//     the driver unhealthy meanwhile;
//   - routes drivers' task events to the handlers task runners register.
//
// Task runners get a driver from Dispense. What they get is a stable proxy,
// not the plugin itself: its calls go to the current plugin process; a call
// that fails because the plugin died waits until the Manager has relaunched
// it and re-runs on the new process. The proxy remembers the handle of every
// task started or recovered through it; after a relaunch, and before any
// call reaches the new process, the Manager re-runs RecoverTask with those
// handles. A task runner waiting on WaitTask therefore never sees the crash:
// its wait resumes on the new process (or ends with the task's real exit, or
// with an error if the task could not be recovered). StartTask is the one
// call not retried: whether a task started when the plugin died is unknown,
// so its error goes back to the task runner's restart policy.
package drivermanager
