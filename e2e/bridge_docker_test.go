package e2e

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/drover-io/drover/api"
)

// Docker in bridge mode end to end: the docker driver makes the group's
// namespace with an infra container (the local pause image where the
// default infra_image cannot be pulled), the client wires it with CNI,
// the docker task and an exec task share it (localhost), the docker
// task is reached through the group's published port on loopback, the
// group's hostname and dns reach both tasks, the allocation reports
// its NetworkStatus, and stopping the job leaves no infra container, no
// namespace and no iptables rule.

// requireDockerBridge skips t without CNI, busybox, the exec driver or
// Docker with the test image.
func requireDockerBridge(t *testing.T) string {
	t.Helper()
	requireCNI(t)
	requireExecDriver(t)
	bb := requireBusybox(t)
	if why := dockerReady(); why != "" {
		t.Skip(why)
	}
	return bb
}

// dockerBridgeJob is a bridge group: docker task "web" serves its local
// dir with busybox httpd on 8080 (port "http"), after writing there
// index.html, its hostname and resolv.conf; exec task "peer" writes its
// hostname and resolv.conf too, fetches web's page over localhost into
// its local/peer.txt, then sleeps.
func dockerBridgeJob(id, bb string) string {
	web := `echo "hello $NOMAD_ALLOC_ID" > /local/index.html; hostname > /local/hostname.txt; cat /etc/resolv.conf > /local/resolv.txt; exec httpd -f -p "$NOMAD_PORT_http" -h /local`
	peer := `hostname > "$NOMAD_TASK_DIR/hostname.txt"; cat /etc/resolv.conf > "$NOMAD_TASK_DIR/resolv.txt"; until ` + bb + ` wget -q -O "$NOMAD_TASK_DIR/peer.tmp" "http://127.0.0.1:$NOMAD_PORT_http/index.html"; do ` + bb + ` sleep 0.2; done; mv "$NOMAD_TASK_DIR/peer.tmp" "$NOMAD_TASK_DIR/peer.txt"; exec ` + bb + ` sleep 3600`
	return fmt.Sprintf(`job %q {
  group "g" {
    network {
      mode     = "bridge"
      hostname = "dash-1"
      dns {
        servers  = ["10.9.8.7"]
        searches = ["drover.test"]
      }
      port "http" {
        to = 8080
      }
    }

    task "web" {
      driver       = "docker"
      kill_timeout = "2s"
      config {
        image   = %q
        command = "sh"
        args    = ["-c", %q]
        ports   = ["http"]
      }
      resources {
        cpu    = 20
        memory = 32
      }
    }

    task "peer" {
      driver = "exec"
      config {
        command = "/bin/sh"
        args    = ["-c", %q]
      }
      resources {
        cpu    = 20
        memory = 32
      }
    }
  }
}
`, id, dockerTestImage, web, peer)
}

// infraContainers returns the IDs of the infra containers (running or not)
// of alloc id.
func infraContainers(t *testing.T, allocID string) []string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, "docker", "ps", "-a", "-q", "--no-trunc",
		"--filter", "label=io.drover.infra=true", "--filter", "label=io.drover.alloc_id="+allocID).CombinedOutput()
	if err != nil {
		t.Fatalf("docker ps: %v: %s", err, out)
	}
	return strings.Fields(string(out))
}

// checkDockerBridgeAlloc checks a running allocation of dockerBridgeJob and
// returns its published URL, its address and its infra container.
func checkDockerBridgeAlloc(t *testing.T, c *api.Client, alloc *api.Allocation) (url, allocIP, infra string) {
	t.Helper()
	ip, port := allocPort(t, alloc, "http")
	url = fmt.Sprintf("http://%s:%d/index.html", ip, port)
	want := "hello " + alloc.ID
	if body := httpBody(t, url); strings.TrimSpace(body) != want {
		t.Errorf("the docker task answers %q on the published port, want %q", body, want)
	}
	if got := catAllocFile(t, c, alloc, "peer/local/peer.txt"); strings.TrimSpace(got) != want {
		t.Errorf("the exec task read %q from the docker task over localhost, want %q", got, want)
	}
	for _, task := range []string{"web", "peer"} {
		if got := catAllocFile(t, c, alloc, task+"/local/hostname.txt"); strings.TrimSpace(got) != "dash-1" {
			t.Errorf("task %s's hostname is %q, want the group's dash-1", task, got)
		}
		if got := catAllocFile(t, c, alloc, task+"/local/resolv.txt"); !strings.Contains(got, "nameserver 10.9.8.7") || !strings.Contains(got, "search drover.test") {
			t.Errorf("task %s's resolv.conf lacks the group's dns:\n%s", task, got)
		}
	}
	ids := infraContainers(t, alloc.ID)
	if len(ids) != 1 {
		t.Fatalf("infra containers of the allocation: %v, want one", ids)
	}
	// The client reports the allocation's network once it is wired.
	waitFor(t, portsRunTimeout, "the allocation's NetworkStatus", func() (bool, string) {
		a, _, err := c.Allocations().Info(alloc.ID, nil)
		if err != nil {
			return false, err.Error()
		}
		ns := a.NetworkStatus
		if ns == nil || ns.InterfaceName != "eth0" || !strings.HasPrefix(ns.Address, "172.26.") || ns.DNS == nil || len(ns.DNS.Servers) != 1 {
			return false, fmt.Sprintf("%+v", ns)
		}
		allocIP = ns.Address
		return true, ""
	})
	return url, allocIP, ids[0]
}

// checkDockerBridgeGone waits for the stopped allocation's namespace and
// infra container to go, and checks no iptables rule is left.
func checkDockerBridgeGone(t *testing.T, netns, allocID, allocIP string) {
	t.Helper()
	waitFor(t, portsRunTimeout, "the allocation's namespace to be removed", func() (bool, string) {
		_, err := os.Stat(netns)
		return os.IsNotExist(err), fmt.Sprint(err)
	})
	waitFor(t, portsRunTimeout, "the infra container to be removed", func() (bool, string) {
		ids := infraContainers(t, allocID)
		return len(ids) == 0, fmt.Sprint(ids)
	})
	if got := allocIPRules(t, allocIP); len(got) != 0 {
		t.Errorf("iptables rules of the stopped allocation are left:\n%s", strings.Join(got, "\n"))
	}
}

// TestBridgeDockerAndExecGroup: a docker task and an exec task in one
// bridge group.
func TestBridgeDockerAndExecGroup(t *testing.T) {
	// Not parallel: compares the host's whole iptables rule set before and after, and every agent's bridge hands out addresses from the same subnet.
	bb := requireDockerBridge(t)
	a := startAgent(t)
	c := a.client(t)
	job := writeFile(t, "dbridge.nomad.hcl", dockerBridgeJob("dbridge", bb))
	if r := a.cli(t, "job", "run", job); r.code != 0 {
		t.Fatalf("job run dbridge:\n%s", r)
	}
	alloc := portsRunningAlloc(t, c, "dbridge")
	_, allocIP, _ := checkDockerBridgeAlloc(t, c, alloc)
	if r := a.cli(t, "alloc", "status", alloc.ID); r.code != 0 || !strings.Contains(r.stdout, "Network Status") || !strings.Contains(r.stdout, allocIP) {
		t.Errorf("alloc status shows no Network Status with %s:\n%s", allocIP, r)
	}
	netns := filepath.Join(agentDataDir(t, a), "netns", alloc.ID)
	if _, err := os.Stat(netns); err != nil {
		t.Fatalf("the allocation's namespace: %v", err)
	}
	if r := a.cli(t, "job", "stop", "dbridge"); r.code != 0 {
		t.Fatalf("job stop dbridge:\n%s", r)
	}
	checkDockerBridgeGone(t, netns, alloc.ID, allocIP)
}

// TestBridgeDockerSurvivesAgentKill9: the docker bridge group keeps
// answering while its agent is killed and after it restarts, with the same
// infra container and not one iptables rule more; then the job stops
// clean.
func TestBridgeDockerSurvivesAgentKill9(t *testing.T) {
	// Not parallel: compares the host's whole iptables rule set before and after, and every agent's bridge hands out addresses from the same subnet.
	bb := requireDockerBridge(t)
	a := newPersistentAgent(t, "dbridge", roleCombined)
	cfg, err := os.ReadFile(a.configPath)
	if err != nil {
		t.Fatal(err)
	}
	patched := strings.Replace(string(cfg), "client {\n  enabled = true\n", "client {\n  enabled = true\n  network_interface = \"lo\"\n", 1)
	if err := os.WriteFile(a.configPath, []byte(patched), 0o644); err != nil {
		t.Fatal(err)
	}
	a.start(t)
	a.waitReady(t, surviveStartTimeout)
	c := a.client(t)
	runJob(t, a, "dbridge", dockerBridgeJob("dbridge", bb))
	alloc := portsRunningAlloc(t, c, "dbridge")
	url, allocIP, infra := checkDockerBridgeAlloc(t, c, alloc)
	want := "hello " + alloc.ID
	rulesBefore := allocIPRules(t, allocIP)

	a.kill9(t)
	if body := httpBody(t, url); strings.TrimSpace(body) != want {
		t.Errorf("with the agent down the published port answers %q, want %q", body, want)
	}
	// An infra container of an allocation the agent does not know, as a
	// crash while destroying one leaves it: the restarted agent removes it.
	orphan := fmt.Sprintf("orphan-%d", os.Getpid())
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if out, err := exec.CommandContext(ctx, "docker", "run", "-d", "--name", "drover-pause-"+orphan, "--network", "none",
		"--label", "io.drover.infra=true", "--label", "io.drover.alloc_id="+orphan, "--label", "io.drover.node_id="+alloc.NodeID,
		dockerTestImage, "sleep", "3600").CombinedOutput(); err != nil {
		t.Fatalf("start an orphan infra container: %v: %s", err, out)
	}
	t.Cleanup(func() { exec.Command("docker", "rm", "-f", "drover-pause-"+orphan).Run() })
	a.start(t)
	a.waitReady(t, surviveStartTimeout)
	waitFor(t, portsRunTimeout, "the restarted agent to log that it kept the namespace", func() (bool, string) {
		return strings.Contains(a.sinceLastStart(), "kept the allocation's network namespace"), "not yet"
	})
	if body := httpBody(t, url); strings.TrimSpace(body) != want {
		t.Errorf("after the restart the published port answers %q, want %q", body, want)
	}
	if ids := infraContainers(t, alloc.ID); len(ids) != 1 || ids[0] != infra {
		t.Errorf("infra containers after the restart: %v, want %s kept", ids, infra)
	}
	waitFor(t, portsRunTimeout, "the orphan infra container to be removed", func() (bool, string) {
		ids := infraContainers(t, orphan)
		return len(ids) == 0, fmt.Sprint(ids)
	})
	if got := allocIPRules(t, allocIP); len(got) != len(rulesBefore) {
		t.Errorf("iptables rules naming %s: %d before the restart, %d after:\n%s", allocIP, len(rulesBefore), len(got), strings.Join(got, "\n"))
	}

	if r := a.cli(t, "job", "stop", "dbridge"); r.code != 0 {
		t.Fatalf("job stop dbridge:\n%s", r)
	}
	checkDockerBridgeGone(t, filepath.Join(a.dataDir, "netns", alloc.ID), alloc.ID, allocIP)
}
