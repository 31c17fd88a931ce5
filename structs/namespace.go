package structs

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"
)

// DefaultNamespaceDescription describes the default namespace until an
// operator sets another description.
const DefaultNamespaceDescription = "Default shared namespace"

// maxNamespaceDescription bounds a namespace's description, as Nomad's.
const maxNamespaceDescription = 256

// validNamespaceName is what a namespace's name may be, as Nomad's.
var validNamespaceName = regexp.MustCompile("^[a-zA-Z0-9-]{1,128}$")

// Namespace isolates jobs (and what belongs to them: allocations,
// evaluations, deployments) from those of other namespaces. The "default"
// namespace always exists.
type Namespace struct {
	Name        string
	Description string
	// Quota names a resource quota: an enterprise feature of Nomad's that
	// drover does not have; a namespace that names one is refused.
	Quota string
	// Capabilities restrict the task drivers and network modes of the
	// namespace's jobs; nil: no restriction.
	Capabilities *NamespaceCapabilities
	// NodePoolConfiguration is Nomad's (enterprise) node pool policy:
	// drover has no node pools, and refuses a namespace that sets one.
	NodePoolConfiguration *NamespaceNodePoolConfiguration
	Meta                  map[string]string
	CreateIndex           uint64
	ModifyIndex           uint64
}

// NamespaceCapabilities restrict what a namespace's jobs may use. An empty
// Enabled list allows everything that Disabled does not name.
type NamespaceCapabilities struct {
	EnabledTaskDrivers   []string
	DisabledTaskDrivers  []string
	EnabledNetworkModes  []string
	DisabledNetworkModes []string
}

// NamespaceNodePoolConfiguration is Nomad's node pool policy of a
// namespace (which pools its jobs may use).
type NamespaceNodePoolConfiguration struct {
	Default string
	Allowed []string
	Denied  []string
}

// DefaultNamespaceObject returns the default namespace as it is before an
// operator changes it (at the first index: it exists from the start).
func DefaultNamespaceObject() *Namespace {
	return &Namespace{Name: DefaultNamespace, Description: DefaultNamespaceDescription, CreateIndex: 1, ModifyIndex: 1}
}

// Validate checks a namespace as Nomad does, and refuses what drover does
// not implement rather than ignoring it.
func (n *Namespace) Validate() error {
	var errs []string
	if !validNamespaceName.MatchString(n.Name) {
		errs = append(errs, fmt.Sprintf("invalid name %q. Must match regex %s", n.Name, validNamespaceName))
	}
	if len(n.Description) > maxNamespaceDescription {
		errs = append(errs, fmt.Sprintf("description longer than %d", maxNamespaceDescription))
	}
	if n.Quota != "" {
		errs = append(errs, fmt.Sprintf("quota %q: resource quotas are not supported by drover; remove the quota", n.Quota))
	}
	if p := n.NodePoolConfiguration; p != nil && (p.Default != "" || len(p.Allowed) > 0 || len(p.Denied) > 0) {
		errs = append(errs, "node_pool_config: node pools are not supported by drover; remove the block")
	}
	if c := n.Capabilities; c != nil {
		if both := intersect(c.EnabledTaskDrivers, c.DisabledTaskDrivers); len(both) > 0 {
			errs = append(errs, fmt.Sprintf("task drivers %s are both enabled and disabled", strings.Join(both, ", ")))
		}
		if both := intersect(c.EnabledNetworkModes, c.DisabledNetworkModes); len(both) > 0 {
			errs = append(errs, fmt.Sprintf("network modes %s are both enabled and disabled", strings.Join(both, ", ")))
		}
	}
	if len(errs) > 0 {
		return Invalid("invalid namespace %q: %s", n.Name, strings.Join(errs, "; "))
	}
	return nil
}

func intersect(a, b []string) []string {
	var out []string
	for _, s := range a {
		if slices.Contains(b, s) && !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return out
}

// Copy returns a deep copy of the namespace.
func (n *Namespace) Copy() *Namespace {
	if n == nil {
		return nil
	}
	c := *n
	c.Meta = maps.Clone(n.Meta)
	if n.Capabilities != nil {
		caps := *n.Capabilities
		caps.EnabledTaskDrivers = slices.Clone(caps.EnabledTaskDrivers)
		caps.DisabledTaskDrivers = slices.Clone(caps.DisabledTaskDrivers)
		caps.EnabledNetworkModes = slices.Clone(caps.EnabledNetworkModes)
		caps.DisabledNetworkModes = slices.Clone(caps.DisabledNetworkModes)
		c.Capabilities = &caps
	}
	if n.NodePoolConfiguration != nil {
		p := *n.NodePoolConfiguration
		p.Allowed = slices.Clone(p.Allowed)
		p.Denied = slices.Clone(p.Denied)
		c.NodePoolConfiguration = &p
	}
	return &c
}

// AllowsJob checks a job against the namespace's capabilities: the task
// drivers and the groups' network modes it uses. The error names the first
// thing the namespace does not allow.
func (n *Namespace) AllowsJob(job *Job) error {
	c := n.Capabilities
	if c == nil {
		return nil
	}
	allowed := func(v string, enabled, disabled []string) bool {
		return (len(enabled) == 0 || slices.Contains(enabled, v)) && !slices.Contains(disabled, v)
	}
	for _, tg := range job.TaskGroups {
		for _, t := range tg.Tasks {
			if !allowed(t.Driver, c.EnabledTaskDrivers, c.DisabledTaskDrivers) {
				return Invalid("group %q, task %q: the task driver %q is not allowed in namespace %q", tg.Name, t.Name, t.Driver, n.Name)
			}
		}
		for _, net := range tg.Networks {
			mode := net.Mode
			if mode == "" {
				mode = NetworkModeHost
			}
			if !allowed(mode, c.EnabledNetworkModes, c.DisabledNetworkModes) {
				return Invalid("group %q: the network mode %q is not allowed in namespace %q", tg.Name, mode, n.Name)
			}
		}
	}
	return nil
}

// NamespaceMissing is the error of a job sent to a namespace that does
// not exist.
func NamespaceMissing(ns string) error {
	return Invalid("namespace %q does not exist: create it first (namespace apply %s), or use an existing namespace (namespace list)", ns, ns)
}

// NamespaceListRequest lists namespaces (Prefix filters by name).
type NamespaceListRequest struct {
	QueryOptions
}

// NamespaceListResponse returns namespaces, by name.
type NamespaceListResponse struct {
	Namespaces []*Namespace
	QueryMeta
}

// NamespaceSpecificRequest reads one namespace.
type NamespaceSpecificRequest struct {
	Name string
	QueryOptions
}

// SingleNamespaceResponse returns one namespace.
type SingleNamespaceResponse struct {
	Namespace *Namespace
	QueryMeta
}

// NamespaceUpsertRequest creates or updates namespaces.
type NamespaceUpsertRequest struct {
	Namespaces []*Namespace
	WriteRequest
}

// NamespaceDeleteRequest deletes namespaces, which must hold no job that
// is not dead.
type NamespaceDeleteRequest struct {
	Names []string
	WriteRequest
}

// NamespaceWriteResponse answers a namespace's upsert or deletion.
type NamespaceWriteResponse struct {
	WriteMeta
}
