package e2e

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/drover-io/drover/api"
)

// Bridge networking end to end: a group in network mode "bridge" gets a
// network namespace of its own, wired with the host's CNI plugins
// (Debian's containernetworking-plugins, installed by .ci/cni.sh); its
// tasks share it (they talk over localhost), its port is published on the
// node's (loopback) address, and stopping the job leaves no namespace and
// no iptables rule behind.

// requireCNI skips t without root, iptables or the CNI plugins.
func requireCNI(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("bridge networking needs root")
	}
	if _, err := exec.LookPath("iptables-save"); err != nil {
		t.Skip("bridge networking needs iptables")
	}
	for _, p := range []string{"bridge", "host-local", "loopback", "portmap", "firewall"} {
		if _, err := os.Stat(filepath.Join("/usr/lib/cni", p)); err != nil {
			if _, err2 := os.Stat(filepath.Join("/opt/cni/bin", p)); err2 != nil {
				t.Skipf("CNI plugin %s is not installed (apt-get install containernetworking-plugins, as .ci/cni.sh does)", p)
			}
		}
	}
}

// bridgeJob is a bridge-mode group: task "web" serves its task dir with
// busybox httpd on port "http" (to = 8080) inside the namespace; task
// "peer" fetches web's index.html over localhost and writes it to its own
// local/peer.txt, then sleeps.
func bridgeJob(id, bb string) string {
	web := `echo "hello $NOMAD_ALLOC_ID" > "$NOMAD_TASK_DIR/index.html"; env > "$NOMAD_TASK_DIR/env.txt"; exec ` + bb + ` httpd -f -p "$NOMAD_PORT_http" -h "$NOMAD_TASK_DIR"`
	peer := `until ` + bb + ` wget -q -O "$NOMAD_TASK_DIR/peer.tmp" "http://127.0.0.1:$NOMAD_PORT_http/index.html"; do ` + bb + ` sleep 0.2; done; mv "$NOMAD_TASK_DIR/peer.tmp" "$NOMAD_TASK_DIR/peer.txt"; exec ` + bb + ` sleep 3600`
	task := func(name, script string) string {
		return fmt.Sprintf(`
    task %q {
      driver = "raw_exec"
      config {
        command = "/bin/sh"
        args    = ["-c", %q]
      }
      resources {
        cpu    = 20
        memory = 32
      }
    }`, name, script)
	}
	return fmt.Sprintf(`job %q {
  group "g" {
    network {
      mode = "bridge"
      port "http" {
        to = 8080
      }
    }
%s
%s
  }
}
`, id, task("web", web), task("peer", peer))
}

// catAllocFile waits for a non-empty file of alloc (path relative to the
// alloc dir) and returns it.
func catAllocFile(t *testing.T, c *api.Client, alloc *api.Allocation, path string) string {
	t.Helper()
	var out string
	waitFor(t, portsRunTimeout, path+" to be written", func() (bool, string) {
		rc, err := c.AllocFS().Cat(alloc, path, nil)
		if err != nil {
			return false, err.Error()
		}
		defer rc.Close()
		b, _ := io.ReadAll(rc)
		out = string(b)
		return strings.TrimSpace(out) != "", "empty"
	})
	return out
}

// agentDataDir is the -data-dir a startAgent agent runs with.
func agentDataDir(t *testing.T, a *agent) string {
	t.Helper()
	i := slices.Index(a.cmd.Args, "-data-dir")
	if i < 0 || i+1 >= len(a.cmd.Args) {
		t.Fatalf("agent started without -data-dir: %v", a.cmd.Args)
	}
	return a.cmd.Args[i+1]
}

func iptablesSave(t *testing.T) string {
	t.Helper()
	var out []string
	for _, table := range []string{"filter", "nat"} {
		b, err := exec.Command("iptables-save", "-t", table).CombinedOutput()
		if err != nil {
			t.Fatalf("iptables-save -t %s: %v: %s", table, err, b)
		}
		out = append(out, string(b))
	}
	return strings.Join(out, "\n")
}

// TestBridgeGroupTwoTasksAndPublishedPort: a bridge group's web task is
// reached from the host on its dynamic host port (127.0.0.1, the dev
// agent's address) while it listens on 8080 in the namespace, its peer
// task reaches it over localhost, the environment has Nomad's bridge
// variables, and stopping the job removes the namespace, its veth and its
// iptables rules.
func TestBridgeGroupTwoTasksAndPublishedPort(t *testing.T) {
	// Not parallel: compares the host's whole iptables rule set before and after, and every agent's bridge hands out addresses from the same subnet.
	requireCNI(t)
	bb := requireBusybox(t)
	a := startAgent(t)
	c := a.client(t)
	nodes, _, err := c.Nodes().List(nil)
	if err != nil || len(nodes) != 1 {
		t.Fatalf("nodes: %v %v", nodes, err)
	}
	node, _, err := c.Nodes().Info(nodes[0].ID, nil)
	if err != nil {
		t.Fatal(err)
	}
	if node.Attributes["plugins.cni.version.bridge"] == "" {
		t.Fatalf("the node has no plugins.cni.version.bridge attribute: %v", node.Attributes)
	}

	vethsBefore := bridgeVeths(t)
	job := writeFile(t, "bridge.nomad.hcl", bridgeJob("bridge", bb))
	if r := a.cli(t, "job", "run", job); r.code != 0 {
		t.Fatalf("job run bridge:\n%s", r)
	}
	alloc := portsRunningAlloc(t, c, "bridge")
	ip, port := allocPort(t, alloc, "http")
	if body := httpBody(t, fmt.Sprintf("http://%s:%d/index.html", ip, port)); strings.TrimSpace(body) != "hello "+alloc.ID {
		t.Errorf("the published port answers %q, want hello %s", body, alloc.ID)
	}
	if got := catAllocFile(t, c, alloc, "peer/local/peer.txt"); strings.TrimSpace(got) != "hello "+alloc.ID {
		t.Errorf("the peer task read %q over localhost, want hello %s", got, alloc.ID)
	}
	env := catAllocFile(t, c, alloc, "web/local/env.txt")
	var allocIP string
	for _, line := range strings.Split(env, "\n") {
		if v, ok := strings.CutPrefix(line, "NOMAD_ALLOC_IP_http="); ok {
			allocIP = v
		}
	}
	if !strings.HasPrefix(allocIP, "172.26.") {
		t.Errorf("NOMAD_ALLOC_IP_http = %q, want an address of 172.26.64.0/20:\n%s", allocIP, env)
	}
	for _, want := range []string{"NOMAD_PORT_http=8080", "NOMAD_ALLOC_PORT_http=8080", "NOMAD_ALLOC_ADDR_http=" + allocIP + ":8080",
		fmt.Sprintf("NOMAD_HOST_PORT_http=%d", port), fmt.Sprintf("NOMAD_ADDR_http=%s:%d", ip, port)} {
		if !strings.Contains(env, want+"\n") {
			t.Errorf("the task's environment lacks %s:\n%s", want, env)
		}
	}
	netns := filepath.Join(agentDataDir(t, a), "netns", alloc.ID)
	if _, err := os.Stat(netns); err != nil {
		t.Fatalf("the allocation's namespace: %v", err)
	}
	if vs := bridgeVeths(t); len(vs) <= len(vethsBefore) {
		t.Errorf("no veth of the allocation on the nomad bridge: %v (before: %v)", vs, vethsBefore)
	}
	if rules := iptablesSave(t); !strings.Contains(rules, allocIP) {
		t.Errorf("no iptables rule names the allocation's address %s", allocIP)
	}

	if r := a.cli(t, "job", "stop", "bridge"); r.code != 0 {
		t.Fatalf("job stop bridge:\n%s", r)
	}
	waitFor(t, portsRunTimeout, "the allocation's namespace to be removed", func() (bool, string) {
		_, err := os.Stat(netns)
		return os.IsNotExist(err), fmt.Sprint(err)
	})
	if rules := iptablesSave(t); strings.Contains(rules, allocIP+"/") || strings.Contains(rules, fmt.Sprintf("--dport %d ", port)) {
		t.Errorf("iptables rules of the stopped allocation are left:\n%s", rules)
	}
	for _, v := range bridgeVeths(t) {
		if !slices.Contains(vethsBefore, v) {
			t.Errorf("veth %s of the stopped allocation is left on the bridge (before the job: %v)", v, vethsBefore)
		}
	}
}

// bridgeVeths lists the interfaces on the "nomad" bridge (none when it
// does not exist).
func bridgeVeths(t *testing.T) []string {
	t.Helper()
	b, err := exec.Command("ip", "-o", "link", "show", "master", "nomad").CombinedOutput()
	if err != nil {
		return nil // no bridge yet
	}
	var out []string
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		if f := strings.Fields(line); len(f) > 1 {
			out = append(out, strings.TrimSuffix(f[1], ":"))
		}
	}
	return out
}

// allocIPRules returns the iptables lines that name ip.
func allocIPRules(t *testing.T, ip string) []string {
	t.Helper()
	var out []string
	for _, l := range strings.Split(iptablesSave(t), "\n") {
		if strings.Contains(l, ip) {
			out = append(out, l)
		}
	}
	return out
}

// TestBridgeSurvivesAgentKill9: a bridge allocation keeps answering on its
// published port while its agent is killed with SIGKILL and after the
// agent starts again on the same state, which keeps the namespace as it is
// (same path, same address, not one iptables rule more); stopping the job
// then removes everything.
func TestBridgeSurvivesAgentKill9(t *testing.T) {
	// Not parallel: compares the host's whole iptables rule set before and after, and every agent's bridge hands out addresses from the same subnet.
	requireCNI(t)
	bb := requireBusybox(t)
	a := newPersistentAgent(t, "bridge", roleCombined)
	// The tasks are reached on loopback: the node's address is lo's.
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
	runJob(t, a, "bridge", bridgeJob("bridge", bb))
	alloc := portsRunningAlloc(t, c, "bridge")
	ip, port := allocPort(t, alloc, "http")
	url := fmt.Sprintf("http://%s:%d/index.html", ip, port)
	want := "hello " + alloc.ID
	if body := httpBody(t, url); strings.TrimSpace(body) != want {
		t.Fatalf("the published port answers %q, want %q", body, want)
	}
	netns := filepath.Join(a.dataDir, "netns", alloc.ID)
	env := catAllocFile(t, c, alloc, "web/local/env.txt")
	var allocIP string
	for _, line := range strings.Split(env, "\n") {
		if v, ok := strings.CutPrefix(line, "NOMAD_ALLOC_IP_http="); ok {
			allocIP = v
		}
	}
	if allocIP == "" {
		t.Fatalf("no NOMAD_ALLOC_IP_http in the task's environment:\n%s", env)
	}
	rulesBefore := allocIPRules(t, allocIP)

	a.kill9(t)
	if body := httpBody(t, url); strings.TrimSpace(body) != want {
		t.Errorf("with the agent down the published port answers %q, want %q", body, want)
	}
	a.start(t)
	a.waitReady(t, surviveStartTimeout)
	waitFor(t, portsRunTimeout, "the restarted agent to log that it kept the namespace", func() (bool, string) {
		return strings.Contains(a.sinceLastStart(), "kept the allocation's network namespace"), "not yet"
	})
	if body := httpBody(t, url); strings.TrimSpace(body) != want {
		t.Errorf("after the restart the published port answers %q, want %q", body, want)
	}
	if _, err := os.Stat(netns); err != nil {
		t.Errorf("the namespace after the restart: %v", err)
	}
	if got := allocIPRules(t, allocIP); len(got) != len(rulesBefore) {
		t.Errorf("iptables rules naming %s: %d before the restart, %d after:\n%s", allocIP, len(rulesBefore), len(got), strings.Join(got, "\n"))
	}

	if r := a.cli(t, "job", "stop", "bridge"); r.code != 0 {
		t.Fatalf("job stop bridge:\n%s", r)
	}
	waitFor(t, portsRunTimeout, "the allocation's namespace to be removed", func() (bool, string) {
		_, err := os.Stat(netns)
		return os.IsNotExist(err), fmt.Sprint(err)
	})
	if got := allocIPRules(t, allocIP); len(got) != 0 {
		t.Errorf("iptables rules of the stopped allocation are left:\n%s", strings.Join(got, "\n"))
	}
}
