package agent

import (
	"io"
	"log/slog"
	"net"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	nomad "github.com/hashicorp/nomad/api"
)

// TestNomadClientServices drives Nomad native service discovery with
// HashiCorp Nomad's own Go API client: a job with a Nomad service and a
// tcp check against a listener of the test's (the mock task listens on
// nothing), read back through Services() and Allocations().Checks().
func TestNomadClientServices(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			_ = c.Close()
		}
	}()
	port := ln.Addr().(*net.TCPAddr).Port

	ta := startLoopbackDevAgent(t)
	cfg := nomad.DefaultConfig()
	cfg.Address, cfg.HttpClient, cfg.SecretID, cfg.Namespace, cfg.Region = ta.base, ta.hc, "", "", ""
	c, err := nomad.NewClient(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()

	newJob := func(provider string) *nomad.Job {
		task := nomad.NewTask("t", "mock_driver").SetConfig("run_for", "5m").
			Require(&nomad.Resources{CPU: new(100), MemoryMB: new(32)})
		tg := nomad.NewTaskGroup("g", 1).AddTask(task)
		tg.Networks = []*nomad.NetworkResource{{ReservedPorts: []nomad.Port{{Label: "http", Value: port}}}}
		tg.Services = []*nomad.Service{{
			Name: "compat-web", Provider: provider, PortLabel: "http", Tags: []string{"b", "a"},
			Checks: []nomad.ServiceCheck{{Name: "alive", Type: "tcp", Interval: time.Second, Timeout: time.Second}},
		}}
		return nomad.NewServiceJob("svc", "svc", "global", 50).AddDatacenter("dc1").AddTaskGroup(tg)
	}

	// Consul is refused, naming the field and the fix.
	if _, _, err := c.Jobs().Register(newJob(""), nil); err == nil || !strings.Contains(err.Error(), `Consul is not supported by drover: set provider = "nomad"`) {
		t.Fatalf("registering a Consul service: err = %v", err)
	}

	if _, _, err := c.Jobs().Register(newJob("nomad"), nil); err != nil {
		t.Fatalf("Jobs().Register: %v", err)
	}
	var regs []*nomad.ServiceRegistration
	var qm *nomad.QueryMeta
	waitIndex(t, "the service to be registered", func(index uint64) (uint64, bool) {
		regs, qm, err = c.Services().Get("compat-web", &nomad.QueryOptions{WaitIndex: index, WaitTime: 30 * time.Second})
		if err != nil {
			t.Fatalf("Services().Get: %v", err)
		}
		return qm.LastIndex, len(regs) == 1
	})
	r := regs[0]
	if r.Address != "127.0.0.1" || r.Port != port || r.JobID != "svc" || r.Namespace != "default" || r.Datacenter != "dc1" ||
		r.NodeID != ta.agent.NodeID() || r.AllocID == "" || !slices.Equal(r.Tags, []string{"b", "a"}) || r.CreateIndex == 0 || qm.LastIndex == 0 {
		t.Fatalf("registration = %+v (index %d)", r, qm.LastIndex)
	}
	list, _, err := c.Services().List(nil)
	if err != nil || len(list) != 1 || list[0].Namespace != "default" || len(list[0].Services) != 1 ||
		list[0].Services[0].ServiceName != "compat-web" || !slices.Equal(list[0].Services[0].Tags, []string{"a", "b"}) {
		t.Fatalf("Services().List = %+v, %v", list, err)
	}
	if picked, _, err := c.Services().Get("compat-web", &nomad.QueryOptions{Params: map[string]string{"choose": "1|client-a"}}); err != nil || len(picked) != 1 {
		t.Fatalf("Get ?choose=1|client-a = %+v, %v", picked, err)
	}
	if byJob, _, err := c.Jobs().Services("svc", nil); err != nil || len(byJob) != 1 || byJob[0].ID != r.ID {
		t.Fatalf("Jobs().Services = %+v, %v", byJob, err)
	}
	if byAlloc, _, err := c.Allocations().Services(r.AllocID, nil); err != nil || len(byAlloc) != 1 || byAlloc[0].ID != r.ID {
		t.Fatalf("Allocations().Services = %+v, %v", byAlloc, err)
	}
	if none, _, err := c.Services().Get("compat-web", &nomad.QueryOptions{Params: map[string]string{"tag": "nope"}}); err != nil || len(none) != 0 {
		t.Fatalf("Get ?tag=nope = %+v, %v", none, err)
	}
	// The client runs the check on its own schedule; the checks endpoint
	// has no blocking query.
	waitFor(t, "the check to pass", func() bool {
		checks, err := c.Allocations().Checks(r.AllocID, nil)
		if err != nil {
			t.Fatalf("Allocations().Checks: %v", err)
		}
		for _, st := range checks {
			if st.Check == "alive" && st.Service == "compat-web" && st.Group == "g" && st.Mode == "healthiness" && st.Status == "success" {
				return true
			}
		}
		return false
	})

	// A blocking query returns when the job stops and its service goes.
	done := make(chan []*nomad.ServiceRegistration, 1)
	go func() {
		regs, _, err := c.Services().Get("compat-web", &nomad.QueryOptions{WaitIndex: qm.LastIndex, WaitTime: 30 * time.Second})
		if err != nil {
			t.Errorf("blocking Services().Get: %v", err)
		}
		done <- regs
	}()
	if _, _, err := c.Jobs().Deregister("svc", false, nil); err != nil {
		t.Fatal(err)
	}
	select {
	case left := <-done:
		if len(left) != 0 {
			// The blocking query may wake on an earlier change: read again.
			waitIndex(t, "the service to go", func(index uint64) (uint64, bool) {
				regs, qm, err := c.Services().Get("compat-web", &nomad.QueryOptions{WaitIndex: index, WaitTime: 30 * time.Second})
				if err != nil {
					t.Fatalf("Services().Get: %v", err)
				}
				return qm.LastIndex, len(regs) == 0
			})
		}
	case <-time.After(40 * time.Second):
		t.Fatal("the blocking query did not return")
	}
}

// startLoopbackDevAgent is startDevAgent with the node reporting its
// loopback address, as `drover agent -dev` does: ports and services are
// on 127.0.0.1.
func startLoopbackDevAgent(t *testing.T) *testAgent {
	t.Helper()
	cfg := &Config{DevMode: true, BindAddr: "127.0.0.1", HTTPPort: 0, NodeName: "test-node"}
	cfg.Client.NetworkInterface = loopbackInterface()
	a, err := NewAgent(cfg, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatalf("NewAgent: %v", err)
	}
	if err := a.Start(); err != nil {
		_ = a.Shutdown()
		t.Fatalf("Start: %v", err)
	}
	ta := &testAgent{t: t, agent: a, base: "http://" + a.HTTPAddr(), hc: &http.Client{Transport: &http.Transport{}}}
	t.Cleanup(func() {
		ta.hc.CloseIdleConnections()
		if err := a.Shutdown(); err != nil {
			t.Errorf("Shutdown: %v", err)
		}
	})
	return ta
}

// TestNomadClientServiceDelete deletes a registration by ID as `nomad
// service delete` does.
func TestNomadClientServiceDelete(t *testing.T) {
	ta := startDevAgent(t)
	cfg := nomad.DefaultConfig()
	cfg.Address, cfg.HttpClient, cfg.SecretID, cfg.Namespace, cfg.Region = ta.base, ta.hc, "", "", ""
	c, err := nomad.NewClient(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	task := nomad.NewTask("t", "mock_driver").SetConfig("run_for", "5m").Require(&nomad.Resources{CPU: new(100), MemoryMB: new(32)})
	task.Services = []*nomad.Service{{Name: "del-me", Provider: "nomad"}}
	job := nomad.NewServiceJob("del", "del", "global", 50).AddDatacenter("dc1").AddTaskGroup(nomad.NewTaskGroup("g", 1).AddTask(task))
	if _, _, err := c.Jobs().Register(job, nil); err != nil {
		t.Fatal(err)
	}
	var regs []*nomad.ServiceRegistration
	waitIndex(t, "the service to be registered", func(index uint64) (uint64, bool) {
		var qm *nomad.QueryMeta
		regs, qm, err = c.Services().Get("del-me", &nomad.QueryOptions{WaitIndex: index, WaitTime: 30 * time.Second})
		if err != nil {
			t.Fatalf("Services().Get: %v", err)
		}
		return qm.LastIndex, len(regs) == 1
	})
	if _, err := c.Services().Delete("del-me", regs[0].ID, nil); err != nil {
		t.Fatalf("Services().Delete: %v", err)
	}
	if regs, _, err := c.Services().Get("del-me", nil); err != nil || len(regs) != 0 {
		t.Fatalf("after delete: %+v, %v", regs, err)
	}
	if _, err := c.Services().Delete("del-me", regs[0].ID, nil); err == nil || !strings.Contains(err.Error(), "404") {
		t.Fatalf("deleting again: err = %v, want a 404", err)
	}
}
