package acl

import "fmt"

// Kind is what a Requirement checks.
type Kind int

// The kinds of requirements.
const (
	// KindUnset is the zero Requirement: a route or method that declared
	// none (a test fails for it; at run time it is refused).
	KindUnset Kind = iota
	// KindPublic needs no token (health, leader, bootstrap).
	KindPublic
	// KindToken needs a token that resolves, anonymous included: the
	// handler returns only what the token may see (namespaces, events),
	// or checks the token itself (token self).
	KindToken
	// KindManagement needs a management token.
	KindManagement
	// KindNamespace needs a namespace capability in the request's
	// namespace.
	KindNamespace
	// KindVariable needs a variables capability on the request's path in
	// its namespace.
	KindVariable
	// KindNodeRead and the kinds below need the coarse rule's level.
	KindNodeRead
	KindNodeWrite
	KindAgentRead
	KindAgentWrite
	KindOperatorRead
	KindOperatorWrite
	KindPluginRead
	KindQuotaRead
	// KindNodeSecret is a node's own call, authenticated by its node
	// secret in the server's handler, not by an ACL token.
	KindNodeSecret
	// KindServer is a call between servers (scheduler workers to the
	// leader), authenticated by the servers' shared secret.
	KindServer
)

// Requirement is what a caller's ACL must grant for one HTTP route or RPC
// method: each declares exactly one.
type Requirement struct {
	Kind       Kind
	Capability string
}

// Public needs nothing.
func Public() Requirement { return Requirement{Kind: KindPublic} }

// AnyToken needs a token that resolves (anonymous included); the handler
// filters or checks the rest.
func AnyToken() Requirement { return Requirement{Kind: KindToken} }

// Management needs a management token.
func Management() Requirement { return Requirement{Kind: KindManagement} }

// Namespace needs namespace capability c.
func Namespace(c string) Requirement { return Requirement{Kind: KindNamespace, Capability: c} }

// Variable needs variables capability c on the request's path.
func Variable(c string) Requirement { return Requirement{Kind: KindVariable, Capability: c} }

// NodeRead needs node read; the functions below are alike.
func NodeRead() Requirement { return Requirement{Kind: KindNodeRead} }

// NodeWrite needs node write.
func NodeWrite() Requirement { return Requirement{Kind: KindNodeWrite} }

// AgentRead needs agent read.
func AgentRead() Requirement { return Requirement{Kind: KindAgentRead} }

// AgentWrite needs agent write.
func AgentWrite() Requirement { return Requirement{Kind: KindAgentWrite} }

// OperatorRead needs operator read.
func OperatorRead() Requirement { return Requirement{Kind: KindOperatorRead} }

// OperatorWrite needs operator write.
func OperatorWrite() Requirement { return Requirement{Kind: KindOperatorWrite} }

// PluginRead needs plugin read.
func PluginRead() Requirement { return Requirement{Kind: KindPluginRead} }

// QuotaRead needs quota read.
func QuotaRead() Requirement { return Requirement{Kind: KindQuotaRead} }

// NodeSecret is a node's call, checked against its node secret.
func NodeSecret() Requirement { return Requirement{Kind: KindNodeSecret} }

// Server is a call between servers.
func Server() Requirement { return Requirement{Kind: KindServer} }

// Declared reports whether the requirement was set.
func (r Requirement) Declared() bool { return r.Kind != KindUnset }

// String describes the requirement (for docs and errors).
func (r Requirement) String() string {
	switch r.Kind {
	case KindPublic:
		return "none"
	case KindToken:
		return "any token (filtered)"
	case KindManagement:
		return "management"
	case KindNamespace:
		return "namespace:" + r.Capability
	case KindVariable:
		return "variables:" + r.Capability
	case KindNodeRead:
		return "node:read"
	case KindNodeWrite:
		return "node:write"
	case KindAgentRead:
		return "agent:read"
	case KindAgentWrite:
		return "agent:write"
	case KindOperatorRead:
		return "operator:read"
	case KindOperatorWrite:
		return "operator:write"
	case KindPluginRead:
		return "plugin:read"
	case KindQuotaRead:
		return "quota:read"
	case KindNodeSecret:
		return "node secret"
	case KindServer:
		return "server"
	}
	return fmt.Sprintf("unset(%d)", int(r.Kind))
}

// Target is what a request names that a requirement is checked against.
type Target struct {
	// Namespace is the request's namespace ("*": every namespace, the
	// result is filtered).
	Namespace string
	// Path is a variable's path ("" for lists).
	Path string
}

// Allows reports whether the ACL meets r for target t. A nil ACL (no
// token resolved) meets only KindPublic. KindNodeSecret and KindServer are
// checked by their callers (node secret, server secret), never here: they
// are refused.
func (a *ACL) Allows(r Requirement, t Target) bool {
	if r.Kind == KindPublic {
		return true
	}
	if a == nil {
		return false
	}
	switch r.Kind {
	case KindToken:
		return true
	case KindManagement:
		return a.management
	case KindNamespace:
		if t.Namespace == "*" {
			return a.AllowNamespaceOperationAny(r.Capability)
		}
		return a.AllowNamespaceOperation(nsOrDefault(t.Namespace), r.Capability)
	case KindVariable:
		if t.Namespace == "*" || t.Path == "" {
			return a.AllowVariableOperationAny(t.Namespace, r.Capability)
		}
		return a.AllowVariableOperation(nsOrDefault(t.Namespace), t.Path, r.Capability)
	case KindNodeRead:
		return a.AllowNodeRead()
	case KindNodeWrite:
		return a.AllowNodeWrite()
	case KindAgentRead:
		return a.AllowAgentRead()
	case KindAgentWrite:
		return a.AllowAgentWrite()
	case KindOperatorRead:
		return a.AllowOperatorRead()
	case KindOperatorWrite:
		return a.AllowOperatorWrite()
	case KindPluginRead:
		return a.AllowPluginRead()
	case KindQuotaRead:
		return a.AllowQuotaRead()
	}
	return false
}

func nsOrDefault(ns string) string {
	if ns == "" {
		return "default"
	}
	return ns
}
