package e2e

import (
	"context"
	"testing"
	"time"

	nomad "github.com/hashicorp/nomad/api"
)

// TestEventStreamReplaysNodeDrainEvents: with Nomad's Go client, a
// subscription at index 0 made after a node's eligibility was turned off
// and on again replays the buffer from its oldest event, as Nomad's
// stream does: the node's registration, then both eligibility changes,
// typed NodeDrain on the Node topic as Nomad types them, with the node's
// eligibility after each.
func TestEventStreamReplaysNodeDrainEvents(t *testing.T) {
	t.Parallel() // one agent of its own
	a := startAgent(t)
	c, err := nomad.NewClient(&nomad.Config{Address: a.addr})
	if err != nil {
		t.Fatal(err)
	}
	var nodeID string
	waitFor(t, 60*time.Second, "the agent's node", func() (bool, string) {
		nodes, _, err := c.Nodes().List(nil)
		if err != nil || len(nodes) != 1 {
			return false, "no node yet"
		}
		nodeID = nodes[0].ID
		return true, ""
	})
	for _, eligible := range []bool{false, true} {
		if _, err := c.Nodes().ToggleEligibility(nodeID, eligible, nil); err != nil {
			t.Fatalf("eligibility %v: %v", eligible, err)
		}
	}

	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	stream, err := c.EventStream().Stream(ctx, map[nomad.Topic][]string{nomad.TopicNode: {nodeID}}, 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	var registered bool
	var drains []string // the node's eligibility after each NodeDrain event
	for len(drains) < 2 {
		select {
		case batch := <-stream:
			if batch == nil || batch.Err != nil {
				t.Fatalf("stream: %+v", batch)
			}
			for _, e := range batch.Events {
				n, err := e.Node()
				if err != nil || n == nil || n.ID != nodeID {
					t.Fatalf("%s event payload: %+v, %v", e.Type, n, err)
				}
				switch e.Type {
				case "NodeRegistration":
					registered = true
				case "NodeDrain":
					if !registered {
						t.Errorf("NodeDrain at %d before the replayed registration", e.Index)
					}
					drains = append(drains, n.SchedulingEligibility)
				}
			}
		case <-ctx.Done():
			t.Fatalf("replay from index 0: registration seen %v, NodeDrain events %v; want the registration and two", registered, drains)
		}
	}
	if drains[0] != nomad.NodeSchedulingIneligible || drains[1] != nomad.NodeSchedulingEligible {
		t.Errorf("eligibility in the NodeDrain events: %v, want [ineligible eligible]", drains)
	}
}
