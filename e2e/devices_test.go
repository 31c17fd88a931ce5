package e2e

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/drover-io/drover/api"
)

// devicesExtraHCL is merged into the dev agent's configuration with
// -config: a node with two fake GPUs.
const devicesExtraHCL = `
plugin "fake_device" {
  config {
    instances  = ["gpu-a", "gpu-b"]
    attributes = { memory = "16 GiB" }
  }
}
`

// deviceJob asks for count drover/gpu/fake instances with at least 8 GiB
// and prints the instances the task was given, then sleeps.
func deviceJob(id string, count int) string {
	return `job "` + id + `" {
  group "g" {
    task "t" {
      driver = "raw_exec"
      config {
        command = "/bin/sh"
        args    = ["-c", "echo \"visible=$FAKE_VISIBLE_DEVICES\"; exec sleep 300"]
      }
      resources {
        cpu    = 20
        memory = 32
        device "drover/gpu/fake" {
          count = ` + strconv.Itoa(count) + `
          constraint {
            attribute = "${device.attr.memory}"
            operator  = ">="
            value     = "8 GiB"
          }
        }
      }
    }
  }
}
`
}

// startDevAgentWithConfig is startAgent with -config extra merged into the
// dev configuration; it waits for the client node only.
func startDevAgentWithConfig(t *testing.T, extra string) *agent {
	t.Helper()
	return launchAgent(t, agentSpec{dev: true, config: extra, configFile: "extra.hcl", wait: waitNode})
}

// TestFakeDevicesEndToEnd: a dev agent with two fake GPUs runs a job that
// asks for one, whose task sees exactly its instance; a job asking for two
// more waits with a placement failure naming the device; alloc stats show
// the device's statistics.
func TestFakeDevicesEndToEnd(t *testing.T) {
	t.Parallel()
	a := startDevAgentWithConfig(t, devicesExtraHCL)
	c := a.client(t)

	waitFor(t, 30*time.Second, "the node's fake GPUs", func() (bool, string) {
		nodes, _, err := c.Nodes().List(nil)
		if err != nil || len(nodes) != 1 {
			return false, "no node"
		}
		n, _, err := c.Nodes().Info(nodes[0].ID, nil)
		if err != nil {
			return false, err.Error()
		}
		if n.NodeResources == nil || len(n.NodeResources.Devices) != 1 {
			return false, "no device group on the node"
		}
		g := n.NodeResources.Devices[0]
		return g.ID() == "drover/gpu/fake" && len(g.Instances) == 2 && g.Instances[0].Healthy && g.Instances[1].Healthy,
			"device group " + g.ID()
	})

	if r := a.cli(t, "job", "run", "-detach", writeFile(t, "one.nomad.hcl", deviceJob("one", 1))); r.code != 0 {
		t.Fatalf("job run one:\n%s", r)
	}
	var stub *api.AllocationListStub
	waitFor(t, 60*time.Second, "job one running", func() (bool, string) {
		s, why := jobAlloc(t, c, "one")
		if s == nil {
			return false, why
		}
		stub = s
		return s.ClientStatus == api.AllocClientStatusRunning, "client status " + s.ClientStatus
	})
	alloc, _, err := c.Allocations().Info(stub.ID, nil)
	if err != nil {
		t.Fatal(err)
	}
	tr := alloc.AllocatedResources.Tasks["t"]
	if tr == nil || len(tr.Devices) != 1 || len(tr.Devices[0].DeviceIDs) != 1 {
		t.Fatalf("allocated devices = %+v", tr)
	}
	given := tr.Devices[0].DeviceIDs[0]
	waitFor(t, 30*time.Second, "the task's output", func() (bool, string) {
		r := a.cli(t, "alloc", "logs", stub.ID, "t")
		return strings.TrimSpace(r.stdout) == "visible="+given, r.String()
	})

	r := a.cli(t, "job", "run", writeFile(t, "two.nomad.hcl", deviceJob("two", 2)))
	if r.code != 2 || !strings.Contains(r.stdout, `devices: drover/gpu/fake`) {
		t.Fatalf("job run two: want exit 2 and a placement failure naming the device\n%s", r)
	}

	waitFor(t, 30*time.Second, "device stats of the alloc", func() (bool, string) {
		r := a.cli(t, "alloc", "status", "-stats", stub.ID)
		return r.code == 0 && strings.Contains(r.stdout, "Allocation Device Stats") &&
			strings.Contains(r.stdout, given) && strings.Contains(r.stdout, "utilisation 50.00 %"), r.String()
	})
	if r := a.cli(t, "node", "status", "-stats", alloc.NodeID); r.code != 0 || !strings.Contains(r.stdout, "drover/gpu/fake") || !strings.Contains(r.stdout, "2/2") {
		t.Errorf("node status -stats:\n%s", r)
	}
	for _, j := range []string{"one", "two"} {
		if r := a.cli(t, "job", "stop", "-purge", j); r.code != 0 {
			t.Errorf("job stop %s:\n%s", j, r)
		}
	}
}
