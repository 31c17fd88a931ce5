// Package taskenv builds a task's runtime environment (the NOMAD_*
// variables, the meta values and the task's env block) and interpolates
// ${...} references in strings and in drivers' config blocks.
//
// Where it sits in the data flow: the client's task env hook fills an Input
// from the allocation, task and node and calls Build; before every start
// the task runner turns that environment into the one the driver's task
// sees (ForIsolation: /local instead of the host path in a chroot or an
// image), resolves every reference of the task's config block against it
// and the node (InterpolateJSON, with NodeAttrs), and hands both to the
// driver in drivers.TaskConfig, for every driver. Drivers may still call
// Interpolate or InterpolateConfig on what they build themselves; on the
// config they get it changes nothing but references the client could not
// resolve, which stay as they are.
//
// It takes plain values, not drover's structs: drivers/shared is reused by
// third-party drivers and must stay on the plugin SDK's side of the line.
package taskenv
