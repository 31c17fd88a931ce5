package api

import (
	"net/http"
	"net/url"
)

// Namespace isolates jobs, their allocations, evaluations and deployments,
// and variables from those of other namespaces. The "default" namespace
// always exists. The fields are Nomad's; drover refuses those of Nomad's
// enterprise features (Quota, node pool, Vault and Consul configurations)
// rather than ignoring them.
type Namespace struct {
	Name                  string
	Description           string
	Quota                 string
	Capabilities          *NamespaceCapabilities          `hcl:"capabilities,block"`
	NodePoolConfiguration *NamespaceNodePoolConfiguration `hcl:"node_pool_config,block"`
	VaultConfiguration    *NamespaceClusterConfiguration  `hcl:"vault,block"`
	ConsulConfiguration   *NamespaceClusterConfiguration  `hcl:"consul,block"`
	Meta                  map[string]string
	CreateIndex           uint64
	ModifyIndex           uint64
	RequiredExtraClaims   map[string]string
	OptionalExtraClaims   map[string]string
}

// NamespaceCapabilities restrict the task drivers and network modes of a
// namespace's jobs: an empty Enabled list allows all but the Disabled ones.
type NamespaceCapabilities struct {
	EnabledTaskDrivers   []string `hcl:"enabled_task_drivers"`
	DisabledTaskDrivers  []string `hcl:"disabled_task_drivers"`
	EnabledNetworkModes  []string `hcl:"enabled_network_modes"`
	DisabledNetworkModes []string `hcl:"disabled_network_modes"`
}

// NamespaceNodePoolConfiguration is Nomad's node pool policy of a
// namespace; drover has no node pools.
type NamespaceNodePoolConfiguration struct {
	Default string
	Allowed []string
	Denied  []string
}

// NamespaceClusterConfiguration is Nomad's Vault or Consul cluster policy
// of a namespace (an enterprise feature).
type NamespaceClusterConfiguration struct {
	Default string
	Allowed []string
	Denied  []string
}

// Namespaces manages namespaces.
type Namespaces struct{ c *Client }

// Namespaces returns the namespace endpoints.
func (c *Client) Namespaces() *Namespaces { return &Namespaces{c: c} }

// List lists the namespaces whose name starts with q.Prefix, by name.
func (n *Namespaces) List(q *QueryOptions) ([]*Namespace, *QueryMeta, error) {
	var out []*Namespace
	qm, err := n.c.query("/v1/namespaces", &out, q)
	if err != nil {
		return nil, nil, err
	}
	return out, qm, nil
}

// Info reads one namespace; IsNotFound(err) when there is none.
func (n *Namespaces) Info(name string, q *QueryOptions) (*Namespace, *QueryMeta, error) {
	var out Namespace
	qm, err := n.c.query("/v1/namespace/"+url.PathEscape(name), &out, q)
	if err != nil {
		return nil, nil, err
	}
	return &out, qm, nil
}

// Register creates or updates a namespace.
func (n *Namespaces) Register(ns *Namespace, w *WriteOptions) (*WriteMeta, error) {
	return n.c.write(http.MethodPut, "/v1/namespace/"+url.PathEscape(ns.Name), ns, nil, w)
}

// Delete deletes a namespace; the agent refuses the default one, and one
// that still holds jobs that are not dead, or variables.
func (n *Namespaces) Delete(name string, w *WriteOptions) (*WriteMeta, error) {
	return n.c.write(http.MethodDelete, "/v1/namespace/"+url.PathEscape(name), nil, nil, w)
}
