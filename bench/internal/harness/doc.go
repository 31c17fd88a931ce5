// Package harness is what the benchmark programs under bench/ share: it
// builds the drover binary, starts a persistent agent (`drover agent
// -config`) as a subprocess in a process group of its own, kills it with
// SIGKILL and starts it again, finds the task shims and their tasks in
// /proc, and reads processes' memory (RSS and PSS).
//
// Where it sits in the data flow: outside it, like the e2e tests: it
// drives a real agent through its HTTP API and watches processes.
package harness
