package structs

import (
	"fmt"
	"maps"
	"regexp"
	"strings"
	"time"
)

// Built-in node pools, as Nomad's: every node is in "default" unless its
// agent names another pool, and a job in "all" may be placed on any node.
const (
	NodePoolDefault = "default"
	NodePoolAll     = "all"
)

// maxNodePoolDescription bounds a pool's description, as Nomad's.
const maxNodePoolDescription = 256

// validNodePoolName is what a node pool's name may be, as Nomad's.
var validNodePoolName = regexp.MustCompile("^[a-zA-Z0-9-_]{1,128}$")

// NodePool groups nodes: a job is placed only on the nodes of its pool
// (Job.NodePool). Pools are created by an operator (node pool apply) or by
// the first node registered in one.
type NodePool struct {
	Name        string
	Description string
	Meta        map[string]string
	// NodeIdentityTTL is how long the identities signed for the pool's
	// nodes live (0: DefaultNodeIdentityTTL); see IdentityTTL.
	NodeIdentityTTL time.Duration
	CreateIndex     uint64
	ModifyIndex     uint64
}

// DefaultNodeIdentityTTL is the lifetime of a node's identity in a pool
// that sets none (and in the built-in pools), as Nomad's.
const DefaultNodeIdentityTTL = 24 * time.Hour

// IdentityTTL returns the lifetime of the identities of the pool's nodes:
// its NodeIdentityTTL, or DefaultNodeIdentityTTL when it sets none (or p
// is nil: a pool without a row).
func (p *NodePool) IdentityTTL() time.Duration {
	if p == nil || p.NodeIdentityTTL <= 0 {
		return DefaultNodeIdentityTTL
	}
	return p.NodeIdentityTTL
}

// BuiltinNodePools returns the built-in pools, which always exist.
func BuiltinNodePools() []*NodePool {
	return []*NodePool{
		{Name: NodePoolAll, Description: "Node pool with all nodes in the cluster.", CreateIndex: 1, ModifyIndex: 1},
		{Name: NodePoolDefault, Description: "Default node pool.", CreateIndex: 1, ModifyIndex: 1},
	}
}

// IsBuiltinNodePool reports whether name is a built-in pool.
func IsBuiltinNodePool(name string) bool { return name == NodePoolDefault || name == NodePoolAll }

// Validate checks a pool an operator writes: its name, its description's
// length, and that it is not a built-in one.
func (p *NodePool) Validate() error {
	var errs []string
	if !validNodePoolName.MatchString(p.Name) {
		errs = append(errs, fmt.Sprintf("invalid name %q: it must match %s", p.Name, validNodePoolName))
	}
	if IsBuiltinNodePool(p.Name) {
		errs = append(errs, fmt.Sprintf("the built-in node pool %q cannot be changed", p.Name))
	}
	if p.NodeIdentityTTL < 0 {
		errs = append(errs, fmt.Sprintf("NodeIdentityTTL %s is negative: give a positive duration, or none for the default %s", p.NodeIdentityTTL, DefaultNodeIdentityTTL))
	}
	if len(p.Description) > maxNodePoolDescription {
		errs = append(errs, fmt.Sprintf("description is %d characters long, more than the %d allowed", len(p.Description), maxNodePoolDescription))
	}
	if len(errs) > 0 {
		return Invalid("node pool: %s", strings.Join(errs, "; "))
	}
	return nil
}

// Copy returns a deep copy of p.
func (p *NodePool) Copy() *NodePool {
	if p == nil {
		return nil
	}
	c := *p
	c.Meta = maps.Clone(p.Meta)
	return &c
}

// NodePoolOf returns the pool a node is in: "default" when its agent
// named none.
func NodePoolOf(n *Node) string {
	if n.NodePool == "" {
		return NodePoolDefault
	}
	return n.NodePool
}

// NodePoolName returns a job's node pool, "" (a job stored before node
// pools) read as "default".
func NodePoolName(p string) string {
	if p == "" {
		return NodePoolDefault
	}
	return p
}

// InNodePool reports whether a node of pool nodePool takes the
// allocations of a job of pool jobPool ("" is "default"; "all" takes
// every node).
func InNodePool(nodePool, jobPool string) bool {
	if jobPool == NodePoolAll {
		return true
	}
	if jobPool == "" {
		jobPool = NodePoolDefault
	}
	if nodePool == "" {
		nodePool = NodePoolDefault
	}
	return nodePool == jobPool
}

// NodePoolListRequest lists node pools (Prefix filters by name).
type NodePoolListRequest struct {
	QueryOptions
}

// NodePoolListResponse returns node pools, by name.
type NodePoolListResponse struct {
	NodePools []*NodePool
	QueryMeta
}

// NodePoolSpecificRequest reads one node pool.
type NodePoolSpecificRequest struct {
	Name string
	QueryOptions
}

// SingleNodePoolResponse returns one node pool.
type SingleNodePoolResponse struct {
	NodePool *NodePool
	QueryMeta
}

// NodePoolUpsertRequest creates or updates node pools.
type NodePoolUpsertRequest struct {
	NodePools []*NodePool
	WriteRequest
}

// NodePoolDeleteRequest deletes node pools, which must hold no node and
// no job that is not dead.
type NodePoolDeleteRequest struct {
	Names []string
	WriteRequest
}

// NodePoolWriteResponse answers a node pool's upsert or deletion.
type NodePoolWriteResponse struct {
	WriteMeta
}
