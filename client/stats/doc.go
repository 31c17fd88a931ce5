// Package stats measures resource usage on the node: the host's CPU,
// memory, disk (of the allocation directory) and uptime (HostCollector),
// and the aggregate of the tasks' samples into an allocation's total
// (SumTasks).
//
// Data flow: the drivers' TaskStats streams feed each task runner's stats
// hook, which keeps the latest sample; the agent's stats endpoints
// (GET /v1/client/allocation/:id/stats, GET /v1/client/stats) read those
// samples and a HostCollector through the client and render them in
// Nomad's wire shape. Nothing here polls on its own: the host CPU
// percentages are the deltas between two Collect calls.
package stats
