// Package devicemanager runs the node's device plugins for the client: it
// configures them, consumes their fingerprints and statistics, forwards
// Reserve to the plugin that owns the devices, restarts a failed plugin with
// backoff, and validates everything a plugin says before it reaches the node
// or a task.
//
// Where it sits in the data flow: the agent passes the device plugin
// catalog (name -> constructor) and the plugin "NAME" { config {...} }
// blocks; a plugin runs when it has a block. The client creates the Manager,
// Starts it before registering the node, and copies Devices() into
// NodeResources.Devices (UpdateNode tells it of every change), so the
// scheduler places device requests against healthy instances. A task
// runner's device hook calls Reserve for the instances its allocation was
// given and hands the result to the driver. The client's stats endpoints
// read AllStats (per node) and InstanceStats (per task), the latter indexed
// by instance ID: a task's lookup costs its own instances, not the node's.
//
// Plugins are not trusted (DESIGN.md): a fingerprint with an empty
// vendor/type/name, a duplicate device ID or a malformed attribute is
// rejected whole with a logged reason; statistics for devices that do not
// exist are dropped with a logged reason; Reserve for an unknown ID never
// reaches a plugin, and an invalid reservation never reaches a task. A
// plugin whose fingerprint stream ends, or that does not fingerprint within
// FingerprintTimeout, is restarted with exponential backoff (the injected
// clock's After); its devices are reported unhealthy meanwhile.
package devicemanager
