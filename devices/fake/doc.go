// Package fake is a configurable device plugin for tests and demos: it
// reports whatever devices its config block describes, hands a task
// FAKE_VISIBLE_DEVICES with the IDs reserved for it, reports per-instance
// utilisation and memory, and can be told to misbehave (crash, hang, emit
// invalid output) so that the client's handling of broken plugins can be
// exercised end to end.
//
// Where it sits in the data flow: the agent's device catalog names it
// "fake_device"; the client's device manager configures it from the agent's
// plugin "fake_device" { config {...} } block and consumes it like any
// device plugin.
package fake
