package docker

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/drover-io/drover/plugins/drivers"
)

// An allocation's infra container: made from the default infra_image or,
// where that cannot be pulled, the driver's own pause image; kept by a
// second CreateNetwork (an agent restart); listed by Networks; its
// namespace has only loopback, and its hostname and resolv.conf are the
// group's; DestroyNetwork removes it, twice without error.
func TestInfraNetworkLifecycle(t *testing.T) {
	h := newHarness(t, nil)
	ctx := context.Background()
	allocID := fmt.Sprintf("%s%d", testAllocPrefix, allocSeq.Add(1))
	req := &drivers.CreateNetworkRequest{AllocID: allocID, NodeID: "node-" + allocID, Hostname: "infra-test",
		DNS: &drivers.DNSConfig{Servers: []string{"10.9.8.7"}, Searches: []string{"drover.test"}}}
	spec, err := h.d.CreateNetwork(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.d.DestroyNetwork(context.Background(), allocID) })
	id := spec.Labels[drivers.NetworkLabelSandboxContainer]
	if id == "" || spec.Hostname != "infra-test" {
		t.Fatalf("spec %+v: want the infra container's ID and hostname", spec)
	}
	var st unix.Stat_t
	if err := unix.Stat(spec.Path, &st); err != nil {
		t.Fatalf("namespace %s: %v", spec.Path, err)
	}
	var self unix.Stat_t
	if err := unix.Stat("/proc/self/ns/net", &self); err == nil && self.Ino == st.Ino {
		t.Fatal("the infra container shares the host's network namespace")
	}
	info, err := h.d.client.inspectContainer(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if info.HostConfig.NetworkMode != "none" || info.Config.Labels[LabelAllocID] != allocID {
		t.Fatalf("infra container network %q labels %v", info.HostConfig.NetworkMode, info.Config.Labels)
	}
	resolv, err := os.ReadFile(info.ResolvConfPath)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(resolv), "nameserver 10.9.8.7") || !strings.Contains(string(resolv), "search drover.test") {
		t.Fatalf("resolv.conf of the infra container:\n%s", resolv)
	}

	again, err := h.d.CreateNetwork(ctx, req)
	if err != nil || again.Labels[drivers.NetworkLabelSandboxContainer] != id || again.Path != spec.Path {
		t.Fatalf("second CreateNetwork = %+v, %v; want %+v kept", again, err, spec)
	}
	ids, err := h.d.Networks(ctx, req.NodeID)
	if err != nil || !slices.Contains(ids, allocID) {
		t.Fatalf("Networks = %v, %v; want %s listed", ids, err, allocID)
	}
	if ids, _ := h.d.Networks(ctx, "another-node"); slices.Contains(ids, allocID) {
		t.Fatalf("Networks of another node = %v: want only its own", ids)
	}

	for i := 0; i < 2; i++ {
		if err := h.d.DestroyNetwork(ctx, allocID); err != nil {
			t.Fatalf("destroy %d: %v", i, err)
		}
	}
	if _, err := h.d.client.inspectContainer(ctx, id); !isNotFound(err) {
		t.Fatalf("infra container after DestroyNetwork: %v", err)
	}
	if ids, _ := h.d.Networks(ctx, req.NodeID); slices.Contains(ids, allocID) {
		t.Fatalf("Networks = %v after DestroyNetwork", ids)
	}
}

// A task of a bridge group runs in the infra container's namespace and
// sees its hostname and resolver.
func TestBridgeTaskJoinsInfra(t *testing.T) {
	h := newHarness(t, nil)
	ctx := context.Background()
	cfg := h.config(TaskConfig{Command: "sh", Args: []string{"-c", "hostname; cat /etc/resolv.conf"}})
	spec, err := h.d.CreateNetwork(ctx, &drivers.CreateNetworkRequest{AllocID: cfg.AllocID, Hostname: "joined-host",
		DNS: &drivers.DNSConfig{Servers: []string{"10.9.8.6"}}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.d.DestroyNetwork(context.Background(), cfg.AllocID) })
	cfg.NetworkMode = "bridge"
	cfg.NetworkIsolation = spec
	h.start(cfg)
	if res := h.wait(cfg.ID); !res.Successful() {
		t.Fatalf("task exit %+v", res)
	}
	if info := h.inspect(cfg); string(info.HostConfig.NetworkMode) != "container:"+spec.Labels[drivers.NetworkLabelSandboxContainer] {
		t.Fatalf("task network mode %q", info.HostConfig.NetworkMode)
	}
	out := readFile(t, cfg.StdoutPath)
	if !strings.Contains(out, "joined-host") || !strings.Contains(out, "nameserver 10.9.8.6") {
		t.Fatalf("task output %q: want the group's hostname and nameserver", out)
	}
}
