// Package e2e holds end-to-end tests: they build the real drover binary,
// start agents as subprocesses on free ports with their own data
// directories (`drover agent -dev`, and persistent agents from config files:
// combined, server-only and client-only, which the survival tests kill -9
// and restart), and drive them with the CLI and with API clients (drover's
// and Nomad's), the way users and their scripts do.
//
// Where it sits in the data flow: outside it, watching the whole path of a
// job, from `drover job run` through server, scheduler, client and driver
// back to `drover alloc status`.
//
// # Writing a test
//
// TestMain builds drover and drover-shim once (with -race when the tests
// run with it) before any test runs. Every agent goes through one
// launcher, agent_test.go:
//
//   - startAgent(t) starts a dev agent on a free port with its own data
//     dir and waits until it has a leader and a ready client node; options
//     (func(*exec.Cmd)) change its command line first, e.g.
//     withConfig(t, hcl) or atLogLevel("info").
//   - launchAgent(t, agentSpec{...}) starts any other agent: a dev agent
//     with a config merged in and more flags, or a configured agent
//     (`agent -config`) from its whole config (give its HTTP port), and
//     says what to wait for (waitLeader, waitNode) and whether the test
//     may kill it (killable).
//   - newPersistentAgent(t, name, role, servers...) prepares a production
//     agent that the test starts, kills (kill9), interrupts and starts
//     again on the same state (start, waitReady).
//
// Each returns an *agent (embedded in persistentAgent) with its addr, its
// dataDir, client(t) (drover's API client), cli(t, args...) (the drover
// CLI against it), its output (every start's), and checkAlive, waitLeader,
// waitNodeReady and interrupt. Every agent is stopped with SIGINT when its
// test ends, and a non-killable agent that died early fails the test.
//
// # Running in parallel
//
// Tests run in parallel: defaultParallel (8) at once unless `go test` is
// given -parallel. A new test calls t.Parallel() first, uses only agents
// it started itself, free ports (freePort, or a portSet where one test
// needs many distinct ones), temp dirs and job names of its own, and
// waits on events with generous bounds (waitFor) rather than sleeping.
// A test that needs the whole machine stays serial, with a comment
// saying why: it sends signals to the test process, changes its
// environment (t.Setenv), measures CPU or wall time, or reads or changes
// host-wide state (iptables rules, the bridge network's subnet, a docker
// name or tag, cgroups outside its allocations) that other tests change
// too. Serial tests run first, alone; the parallel ones then run together.
package e2e
