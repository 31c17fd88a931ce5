package version

// Version is drover's version: printed by `drover version`, reported by
// the agent's /v1/agent/self and as the node attribute drover.version.
const Version = "0.1.0-dev"

// NomadVersion is the Nomad release whose job specification, HTTP API and
// agent configuration this drover release follows. Nodes report it as the
// nomad.version attribute, so that jobs written for Nomad that constrain
// on it (`${attr.nomad.version} version >= 1.6`) place on drover nodes;
// drover's own version is the drover.version attribute.
const NomadVersion = "1.10.0"
