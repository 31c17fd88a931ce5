// Package taskenv builds a task's runtime environment (the NOMAD_*
// variables plus the task's env block) and interpolates ${...} references
// in strings and decoded driver configs.
//
// Where it sits in the data flow: the client's task env hook fills an Input
// from the allocation, task and node, calls Build and puts the result in
// drivers.TaskConfig.Env; drivers (raw_exec, third-party ones) call
// Interpolate or InterpolateConfig on their config with that Env.
//
// It takes plain values, not drover's structs: drivers/shared is reused by
// third-party drivers and must stay on the plugin SDK's side of the line.
package taskenv
