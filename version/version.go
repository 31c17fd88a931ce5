package version

// Version is drover's version: printed by `drover version`, reported by
// the agent's /v1/agent/self and as the node attribute drover.version.
const Version = "0.1.0-dev"
