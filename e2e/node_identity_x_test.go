package e2e

import (
	"fmt"
	"testing"
	"time"

	nomad "github.com/hashicorp/nomad/api"
)

// TestNodeIdentityRenewal: a dev agent's node holds an identity with
// Nomad's claims, living the default pool's 24 hours, and an operator's
// renewal gets it a new one on a later heartbeat. Runs in parallel: it
// needs only its own agent.
func TestNodeIdentityRenewal(t *testing.T) {
	t.Parallel()
	a := startAgent(t)
	c, err := nomad.NewClient(&nomad.Config{Address: a.addr})
	if err != nil {
		t.Fatal(err)
	}
	nodes, _, err := c.Nodes().List(nil)
	if err != nil || len(nodes) != 1 {
		t.Fatalf("nodes %v, %v: want the dev agent's one", nodes, err)
	}
	node := nodes[0]
	got, err := c.Nodes().Identity().Get(&nomad.NodeIdentityGetRequest{NodeID: node.ID}, nil)
	if err != nil {
		t.Fatalf("get identity: %v", err)
	}
	cl := got.Claims
	if cl["nomad_node_id"] != node.ID || cl["nomad_node_pool"] != "default" || cl["nomad_node_datacenter"] != node.Datacenter ||
		cl["sub"] != "node:global:default:"+node.ID+":default" {
		t.Fatalf("claims %v: want node %s in pool default, datacenter %s", cl, node.ID, node.Datacenter)
	}
	iat, _ := cl["iat"].(float64)
	exp, _ := cl["exp"].(float64)
	if time.Duration(exp-iat)*time.Second != 24*time.Hour {
		t.Errorf("identity lives %s, want the default 24h", time.Duration(exp-iat)*time.Second)
	}
	first := cl["jti"]

	if _, err := c.Nodes().Identity().Renew(&nomad.NodeIdentityRenewRequest{NodeID: node.ID}, nil); err != nil {
		t.Fatalf("renew: %v", err)
	}
	waitFor(t, 2*time.Minute, "a renewed node identity", func() (bool, string) {
		a.checkAlive(t)
		got, err := c.Nodes().Identity().Get(&nomad.NodeIdentityGetRequest{NodeID: node.ID}, nil)
		if err != nil {
			return false, err.Error()
		}
		return got.Claims["jti"] != first, fmt.Sprintf("still identity %v", first)
	})
}
