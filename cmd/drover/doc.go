// Command drover is the drover binary: server, node agent, CLI and plugins
// in one. Everything it does is in package command: main hands it the
// arguments and exits with its status. It is also re-executed as a task's
// shim ("drover shim") and as the exec driver's isolation init stage
// ("drover isolation-init"), which command.Run dispatches first.
package main
