package client

import (
	"fmt"
	"maps"

	"github.com/drover-io/drover/client/state"
	"github.com/drover-io/drover/structs"
)

// A node's metadata has two layers. The static layer is the client's
// default keys (defaultNodeMeta) under the agent's `client { meta }`,
// fixed for the agent's life. The dynamic layer is what operators apply
// at run time (`drover node meta apply`, POST /v1/client/metadata): a
// value by key, or nil for a key unset, kept in the client's state so
// that it outlives a restart. The node's Meta is the static layer with
// the dynamic one applied: a dynamic value wins, and a dynamic nil
// removes the key, a static one included (as Nomad does), until a later
// apply sets it again.

// defaultNodeMeta returns the keys every Nomad client has in its node's
// Meta, with Nomad's values: the Consul service mesh (Connect) settings
// that jobs read as ${meta.connect.*}. Drover runs no Connect sidecars;
// the keys are there for the jobs, scripts and API clients that read
// them (Nomad's own API tests expect a node to have default meta). A key
// of the agent's `client { meta }` replaces its default.
func defaultNodeMeta() map[string]string {
	const envoyImage = "docker.io/envoyproxy/envoy:v${NOMAD_envoy_version}"
	return map[string]string{
		"connect.sidecar_image":                           envoyImage,
		"connect.gateway_image":                           envoyImage,
		"connect.log_level":                               "info",
		"connect.proxy_concurrency":                       "1",
		"connect.transparent_proxy.default_uid":           "101",
		"connect.transparent_proxy.default_outbound_port": "15001",
	}
}

// staticNodeMeta returns the static layer of the node's metadata: the
// defaults under the configured meta.
func staticNodeMeta(configured map[string]string) map[string]string {
	m := defaultNodeMeta()
	maps.Copy(m, configured)
	return m
}

// loadDynamicNodeMeta reads the dynamic metadata an earlier run applied.
// An entry that does not decode stops the client with the state file's
// error (which says what to do): starting without it would place work
// against metadata the operator changed, and the next apply would
// overwrite it.
func loadDynamicNodeMeta(db state.StateDB) (map[string]*string, error) {
	dyn, err := db.GetNodeMeta()
	if err != nil {
		return nil, fmt.Errorf("client: read the node's dynamic metadata: %w", err)
	}
	return dyn, nil
}

// NodeMeta returns the node's metadata: merged, dynamic and static.
func (c *Client) NodeMeta() *structs.NodeMeta {
	c.metaMu.Lock()
	dyn := structs.CopyNodeMeta(c.dynamicMeta)
	c.metaMu.Unlock()
	return &structs.NodeMeta{
		Meta:    structs.MergeNodeMeta(c.staticMeta, dyn),
		Dynamic: dyn,
		Static:  maps.Clone(c.staticMeta),
	}
}

// ApplyNodeMeta changes the node's dynamic metadata (a value sets a key,
// nil unsets it), stores it in the client's state, updates the node's
// Meta and sends the node to the servers, and returns the node's
// metadata after the change. Invalid keys are refused (structs.Invalid)
// before anything changes; a failed write changes nothing.
func (c *Client) ApplyNodeMeta(changes map[string]*string) (*structs.NodeMeta, error) {
	if err := structs.ValidateNodeMetaChanges(changes); err != nil {
		return nil, err
	}
	// metaMu is held across the state write on purpose: applies are
	// serialized so that the stored and the in-memory metadata (and the
	// node's Meta) always agree. Nothing else takes it.
	c.metaMu.Lock()
	next := structs.CopyNodeMeta(c.dynamicMeta)
	if next == nil {
		next = make(map[string]*string, len(changes))
	}
	maps.Copy(next, structs.CopyNodeMeta(changes))
	if err := c.stateDB.PutNodeMeta(next); err != nil {
		c.metaMu.Unlock()
		return nil, fmt.Errorf("client: save the node's dynamic metadata: %w", err)
	}
	c.dynamicMeta = next
	merged := structs.MergeNodeMeta(c.staticMeta, next)
	c.updateNode(func(n *structs.Node) { n.Meta = maps.Clone(merged) })
	out := &structs.NodeMeta{Meta: merged, Dynamic: structs.CopyNodeMeta(next), Static: maps.Clone(c.staticMeta)}
	c.metaMu.Unlock()

	c.logger.Info("node metadata applied", "keys", len(changes))
	c.signalNodeChanged()
	return out, nil
}

// signalNodeChanged asks nodeUpdateLoop to send the node to the servers.
func (c *Client) signalNodeChanged() {
	select {
	case c.nodeChanged <- struct{}{}:
	default: // an update is already pending
	}
}
