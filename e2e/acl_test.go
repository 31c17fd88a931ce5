package e2e

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	nomad "github.com/hashicorp/nomad/api"
)

// startACLAgent starts a dev agent with ACLs enabled (and no token in its
// environment) and waits for its leader (a public endpoint); its node is
// checked after the bootstrap.
func startACLAgent(t *testing.T) *agent {
	t.Helper()
	return launchAgent(t, agentSpec{dev: true, args: []string{"-acl-enabled"},
		env: []string{"NOMAD_TOKEN=", "DROVER_TOKEN="}, wait: waitLeader})
}

// TestACLEndToEnd runs an agent with ACLs and checks, with Nomad's Go API
// client and drover's CLI, that anonymous reads and writes are refused,
// bootstrap works once, a read-only token reads and cannot write, and the
// management token can do all.
func TestACLEndToEnd(t *testing.T) {
	t.Parallel()
	a := startACLAgent(t)
	anon, err := nomad.NewClient(&nomad.Config{Address: a.addr})
	if err != nil {
		t.Fatal(err)
	}
	denied := func(what string, err error) {
		t.Helper()
		if err == nil || !strings.Contains(err.Error(), "403") || !strings.Contains(err.Error(), "Permission denied") {
			t.Fatalf("%s: %v, want 403 Permission denied", what, err)
		}
	}
	_, _, err = anon.Jobs().List(nil)
	denied("anonymous job list", err)
	job := nomad.NewBatchJob("acl-e2e", "acl-e2e", "global", 50)
	job.AddTaskGroup(nomad.NewTaskGroup("g", 1).AddTask(nomad.NewTask("t", "raw_exec").
		SetConfig("command", "/bin/true").Require(&nomad.Resources{CPU: pointer(20), MemoryMB: pointer(16)})))
	_, _, err = anon.Jobs().Register(job, nil)
	denied("anonymous job register", err)

	// Bootstrap once, with the CLI.
	r := a.cli(t, "acl", "bootstrap", "-json")
	if r.code != 0 {
		t.Fatalf("acl bootstrap: %s", r)
	}
	var boot nomad.ACLToken
	if err := json.Unmarshal([]byte(r.stdout), &boot); err != nil || boot.Type != "management" || boot.SecretID == "" {
		t.Fatalf("bootstrap token %+v (%v):\n%s", boot, err, r.stdout)
	}
	if _, _, err := anon.ACLTokens().Bootstrap(nil); err == nil || !strings.Contains(err.Error(), "ACL bootstrap already done") {
		t.Fatalf("second bootstrap: %v", err)
	}

	mgmt, err := nomad.NewClient(&nomad.Config{Address: a.addr, SecretID: boot.SecretID})
	if err != nil {
		t.Fatal(err)
	}
	self, _, err := mgmt.ACLTokens().Self(nil)
	if err != nil || self.AccessorID != boot.AccessorID {
		t.Fatalf("token self: %+v, %v", self, err)
	}
	waitFor(t, 60*time.Second, "the agent's node to be ready", func() (bool, string) {
		nodes, _, err := mgmt.Nodes().List(nil)
		if err != nil {
			return false, err.Error()
		}
		for _, n := range nodes {
			if n.Status == "ready" {
				return true, ""
			}
		}
		return false, "no ready node"
	})

	// A read-only token, made with the CLI.
	rules := writeFile(t, "ro.hcl", "namespace \"default\" {\n  policy = \"read\"\n}\n")
	if r := a.cli(t, "acl", "policy", "apply", "-token", boot.SecretID, "-description", "read only", "ro", rules); r.code != 0 {
		t.Fatalf("acl policy apply: %s", r)
	}
	bad := writeFile(t, "bad.hcl", "namespace \"default\" {\n  policy = \"reed\"\n}\n")
	if r := a.cli(t, "acl", "policy", "apply", "-token", boot.SecretID, "bad", bad); r.code == 0 || !strings.Contains(r.stderr, "bad:2:") {
		t.Fatalf("acl policy apply of bad rules: %s", r)
	}
	r = a.cli(t, "acl", "token", "create", "-token", boot.SecretID, "-name", "reader", "-policy", "ro", "-ttl", "1h", "-json")
	if r.code != 0 {
		t.Fatalf("acl token create: %s", r)
	}
	var ro nomad.ACLToken
	if err := json.Unmarshal([]byte(r.stdout), &ro); err != nil || ro.ExpirationTime == nil {
		t.Fatalf("read-only token %+v (%v):\n%s", ro, err, r.stdout)
	}
	reader, err := nomad.NewClient(&nomad.Config{Address: a.addr, SecretID: ro.SecretID})
	if err != nil {
		t.Fatal(err)
	}
	_, _, err = reader.Jobs().Register(job, nil)
	denied("read-only job register", err)

	// Management can do all; the read-only token then reads the job.
	if _, _, err := mgmt.Jobs().Register(job, nil); err != nil {
		t.Fatalf("management job register: %v", err)
	}
	jobs, _, err := reader.Jobs().List(nil)
	if err != nil || len(jobs) != 1 {
		t.Fatalf("read-only job list: %v, %v", jobs, err)
	}
	_, _, err = reader.Nodes().List(nil)
	denied("read-only node list", err)
	if r := a.cli(t, "job", "status", "-token", ro.SecretID, "acl-e2e"); r.code != 0 {
		t.Fatalf("job status with the read-only token: %s", r)
	}
	if r := a.cli(t, "acl", "token", "list", "-token", boot.SecretID); r.code != 0 || !strings.Contains(r.stdout, "reader") {
		t.Fatalf("acl token list: %s", r)
	}
	bogus, _ := nomad.NewClient(&nomad.Config{Address: a.addr, SecretID: "00000000-0000-0000-0000-000000000000"})
	if _, _, err := bogus.Jobs().List(nil); err == nil || !strings.Contains(err.Error(), "ACL token not found") {
		t.Fatalf("unknown token: %v", err)
	}
}
