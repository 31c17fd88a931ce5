package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	nomad "github.com/hashicorp/nomad/api"
)

// identityJob is a raw_exec job whose task exposes its workload identity
// in its environment and in secrets/nomad_token, copies what it sees to
// local/ (the alloc fs API does not read secrets/), and runs until
// stopped.
const identityJob = `job "wi" {
  group "g" {
    task "web" {
      driver = "raw_exec"
      identity {
        env  = true
        file = true
      }
      identity {
        name = "ext"
        aud  = ["example.com"]
        file = true
        ttl  = "1h"
      }
      config {
        command = "/bin/sh"
        args    = ["-c", "printf %s \"$NOMAD_TOKEN\" > local/env_token; cat secrets/nomad_token > local/file_token; test -s secrets/nomad_ext.jwt && echo yes > local/ext; printf %s \"$NOMAD_UNIX_ADDR\" > local/unix_addr; while true; do sleep 1; done"]
      }
      resources {
        cpu    = 20
        memory = 16
      }
    }
  }
}
`

// TestWorkloadIdentity runs a task with an identity block and checks,
// with the Nomad API client, that its token reads the task's own variable
// through the agent's HTTP API and through the task API socket, and is
// refused another job's variable, other endpoints, and everything once
// the task is stopped; the socket refuses a request without a token.
func TestWorkloadIdentity(t *testing.T) {
	t.Parallel()
	// A short data dir: the task API socket's path must fit a Unix
	// socket address (108 bytes).
	dataDir, err := os.MkdirTemp("", "wi")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dataDir) })
	a := startAgent(t, func(c *exec.Cmd) { c.Args = append(c.Args, "-data-dir", dataDir) })
	c := a.client(t)
	for path, item := range map[string]string{"nomad/jobs/wi": "secret=mine", "nomad/jobs/other": "secret=theirs"} {
		if r := a.cli(t, "var", "put", path, item); r.code != 0 {
			t.Fatalf("var put %s: %s", path, r)
		}
	}
	if r := a.cli(t, "job", "run", "-detach", writeFile(t, "wi.nomad.hcl", identityJob)); r.code != 0 {
		t.Fatalf("job run:\n%s", r)
	}
	var allocID string
	cat := func(rel string) string {
		r := a.cli(t, "alloc", "fs", allocID, "web/local/"+rel)
		if r.code != 0 {
			return ""
		}
		return r.stdout
	}
	waitFor(t, 90*time.Second, "the task to write what it sees", func() (bool, string) {
		stub, msg := jobAlloc(t, c, "wi")
		if stub == nil {
			return false, msg
		}
		allocID = stub.ID
		if cat("unix_addr") == "" {
			return false, "task status " + stub.ClientStatus
		}
		return true, ""
	})
	token := cat("env_token")
	if !strings.HasPrefix(token, "eyJ") || strings.Count(token, ".") != 2 {
		t.Fatalf("NOMAD_TOKEN = %q, want a JWT", token)
	}
	if ft := cat("file_token"); ft != token {
		t.Errorf("secrets/nomad_token = %q, want NOMAD_TOKEN %q", ft, token)
	}
	if cat("ext") != "yes\n" {
		t.Error("the named identity has no file secrets/nomad_ext.jwt")
	}
	sock, ok := strings.CutPrefix(cat("unix_addr"), "unix://")
	if !ok || !strings.HasSuffix(sock, "/web/secrets/api.sock") {
		t.Fatalf("NOMAD_UNIX_ADDR = %q", cat("unix_addr"))
	}

	clients := map[string]*nomad.Client{}
	for name, addr := range map[string]string{"http": a.addr, "socket": "unix://" + sock} {
		nc, err := nomad.NewClient(&nomad.Config{Address: addr, SecretID: token})
		if err != nil {
			t.Fatal(err)
		}
		clients[name] = nc
	}
	for name, nc := range clients {
		t.Run(name, func(t *testing.T) {
			v, _, err := nc.Variables().Read("nomad/jobs/wi", nil)
			if err != nil || v.Items["secret"] != "mine" {
				t.Fatalf("read its own variable: %+v, %v", v, err)
			}
			if _, _, err := nc.Variables().Read("nomad/jobs/other", nil); err == nil || !strings.Contains(err.Error(), "403") {
				t.Errorf("read another job's variable: %v, want 403", err)
			}
			list, _, err := nc.Variables().List(nil)
			if err != nil || len(list) != 1 || list[0].Path != "nomad/jobs/wi" {
				t.Errorf("list: %+v, %v; want only its own variable", list, err)
			}
			if _, _, err := nc.Jobs().List(nil); err == nil || !strings.Contains(err.Error(), "403") {
				t.Errorf("list jobs: %v, want 403", err)
			}
			if _, err := nc.Variables().Delete("nomad/jobs/wi", nil); err == nil || !strings.Contains(err.Error(), "403") {
				t.Errorf("delete its variable: %v, want 403", err)
			}
		})
	}
	anon, err := nomad.NewClient(&nomad.Config{Address: "unix://" + sock})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := anon.Variables().Read("nomad/jobs/wi", nil); err == nil || !strings.Contains(err.Error(), "403") {
		t.Errorf("the task API without a token: %v, want 403", err)
	}

	// Once the task is stopped its identity grants nothing.
	if r := a.cli(t, "job", "stop", "-detach", "wi"); r.code != 0 {
		t.Fatalf("job stop: %s", r)
	}
	waitFor(t, 60*time.Second, "the stopped task's identity to be refused", func() (bool, string) {
		_, _, err := clients["http"].Variables().Read("nomad/jobs/wi", nil)
		return err != nil && strings.Contains(err.Error(), "403"), fmt.Sprintf("read answered %v", err)
	})
}

// TestTaskAPISurvivesRestart restarts an agent while a task with an
// identity runs, and checks that the task API socket serves the task
// again once the agent has re-attached to it.
func TestTaskAPISurvivesRestart(t *testing.T) {
	t.Parallel()
	// A short data dir: the socket's path must fit a Unix socket address
	// (108 bytes), which t.TempDir's names do not always leave room for.
	// Removed last: cleanups run in reverse order.
	short, err := os.MkdirTemp("", "wi")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(short) })
	a := newPersistentAgent(t, "n1", roleCombined)
	a.dataDir = short
	if err := os.WriteFile(a.configPath, []byte(agentConfigHCL(a.role, a.name, a.dataDir, a.httpPort, a.rpcPort, nil)), 0o644); err != nil {
		t.Fatal(err)
	}
	a.start(t)
	a.waitReady(t, surviveStartTimeout)
	if r := a.cli(t, "var", "put", "nomad/jobs/wi", "secret=mine"); r.code != 0 {
		t.Fatalf("var put: %s", r)
	}
	runJob(t, a, "wi", identityJob)
	c := a.client(t)
	var allocID, sock, token string
	cat := func(rel string) string {
		r := a.cli(t, "alloc", "fs", allocID, "web/local/"+rel)
		if r.code != 0 {
			return ""
		}
		return r.stdout
	}
	waitFor(t, surviveRunTimeout, "the task to write what it sees", func() (bool, string) {
		stub, msg := jobAlloc(t, c, "wi")
		if stub == nil {
			return false, msg
		}
		allocID = stub.ID
		sock, token = strings.TrimPrefix(cat("unix_addr"), "unix://"), cat("env_token")
		return sock != "" && token != "", "task status " + stub.ClientStatus
	})
	nc, err := nomad.NewClient(&nomad.Config{Address: "unix://" + sock, SecretID: token})
	if err != nil {
		t.Fatal(err)
	}
	read := func() (bool, string) {
		v, _, err := nc.Variables().Read("nomad/jobs/wi", nil)
		if err != nil {
			return false, err.Error()
		}
		return v.Items["secret"] == "mine", fmt.Sprintf("read %+v", v.Items)
	}
	waitFor(t, surviveRunTimeout, "the task API to serve", read)
	a.interrupt(t)
	a.start(t)
	a.waitReady(t, surviveStartTimeout)
	waitFor(t, surviveRunTimeout, "the task API to serve after the restart", read)
	if r := a.cli(t, "job", "stop", "wi"); r.code != 0 {
		t.Fatalf("job stop: %s", r)
	}
}
