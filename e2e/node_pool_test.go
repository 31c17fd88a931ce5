package e2e

import (
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	nomad "github.com/hashicorp/nomad/api"
)

// TestNomadAPINodePools drives the node pool endpoints with HashiCorp's
// own client: a client agent in pool "gpu" makes the pool exist, an
// operator writes its description, a job of the pool runs on the node, a
// job of an unknown pool is refused, and a pool with nodes cannot be
// deleted while an empty one can.
func TestNomadAPINodePools(t *testing.T) {
	t.Parallel()
	a := startAgent(t, func(cmd *exec.Cmd) { cmd.Args = append(cmd.Args, "-node-pool", "gpu") })
	c, err := nomad.NewClient(&nomad.Config{Address: a.addr})
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, time.Minute, "the node in pool gpu", func() (bool, string) {
		nodes, _, err := c.NodePools().ListNodes("gpu", nil)
		if err != nil {
			return false, err.Error()
		}
		return len(nodes) == 1, "nodes in gpu: " + strconv.Itoa(len(nodes))
	})
	if _, err := c.NodePools().Register(&nomad.NodePool{Name: "gpu", Description: "GPU nodes", Meta: map[string]string{"team": "ml"}}, nil); err != nil {
		t.Fatalf("register gpu: %v", err)
	}
	if _, err := c.NodePools().Register(&nomad.NodePool{Name: "empty"}, nil); err != nil {
		t.Fatalf("register empty: %v", err)
	}
	pools, _, err := c.NodePools().List(nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, p := range pools {
		names = append(names, p.Name)
	}
	if got := strings.Join(names, ","); got != "all,default,empty,gpu" {
		t.Fatalf("pools %s", got)
	}
	gpu, _, err := c.NodePools().Info("gpu", nil)
	if err != nil || gpu.Description != "GPU nodes" || gpu.Meta["team"] != "ml" {
		t.Fatalf("info gpu: %+v, %v", gpu, err)
	}

	job := nomad.NewServiceJob("in-gpu", "in-gpu", "global", 50)
	job.NodePool = pointer("gpu")
	task := nomad.NewTask("t", "raw_exec").SetConfig("command", "/bin/sleep").SetConfig("args", []string{"300"}).
		Require(&nomad.Resources{CPU: pointer(20), MemoryMB: pointer(16)})
	job.AddTaskGroup(nomad.NewTaskGroup("g", 1).AddTask(task))
	if _, _, err := c.Jobs().Register(job, nil); err != nil {
		t.Fatalf("register job in gpu: %v", err)
	}
	waitFor(t, time.Minute, "the job of pool gpu running", func() (bool, string) {
		allocs, _, err := c.Jobs().Allocations("in-gpu", false, nil)
		if err != nil || len(allocs) != 1 {
			return false, "no allocation"
		}
		return allocs[0].ClientStatus == "running", allocs[0].ClientStatus
	})
	jobs, _, err := c.NodePools().ListJobs("gpu", nil)
	if err != nil || len(jobs) != 1 || jobs[0].ID != "in-gpu" {
		t.Fatalf("jobs of gpu: %+v, %v", jobs, err)
	}
	lost := nomad.NewServiceJob("lost", "lost", "global", 50)
	lost.NodePool = pointer("nope")
	lost.AddTaskGroup(nomad.NewTaskGroup("g", 1).AddTask(task))
	if _, _, err := c.Jobs().Register(lost, nil); err == nil || !strings.Contains(err.Error(), `node pool "nope", which does not exist`) {
		t.Fatalf("register in an unknown pool: %v", err)
	}

	if _, err := c.NodePools().Delete("gpu", nil); err == nil {
		t.Fatal("deleted a pool that has a node")
	}
	if _, err := c.NodePools().Delete("default", nil); err == nil {
		t.Fatal("deleted the built-in pool default")
	}
	if _, err := c.NodePools().Delete("empty", nil); err != nil {
		t.Fatalf("delete empty: %v", err)
	}
	if _, _, err := c.NodePools().Info("empty", nil); err == nil {
		t.Fatal("pool empty still there")
	}
}
