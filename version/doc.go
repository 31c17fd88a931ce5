// Package version holds drover's version, the one definition that the CLI
// (command), the agent's HTTP API (agent) and the node's drover.version
// attribute (client) all report. It sits at the bottom of the dependency
// graph: it imports nothing, so any package may import it.
package version
