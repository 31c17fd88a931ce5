package allocnet

import (
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	types100 "github.com/containernetworking/cni/pkg/types/100"
	"golang.org/x/sys/unix"
)

// testManager returns a Manager over the host's CNI plugins, skipping
// with the reason when they (or root) are absent.
func testManager(t *testing.T) *Manager {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("network namespaces and CNI need root")
	}
	dirs := PluginDirs("")
	for _, p := range bridgePlugins {
		if !exists(filepath.Join(dirs[0], p)) {
			t.Skipf("CNI plugin %s is not installed in %s (apt-get install containernetworking-plugins)", p, dirs[0])
		}
	}
	if _, err := exec.LookPath("iptables"); err != nil {
		t.Skip("iptables is not installed")
	}
	dir := t.TempDir()
	m, err := New(Config{PluginDirs: dirs, NetnsDir: filepath.Join(dir, "netns"), CacheDir: filepath.Join(dir, "cache")}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

var bridgePlugins = []string{"bridge", "host-local", "loopback", "portmap", "firewall"}

// listenIn listens on TCP port in the namespace at path and answers each
// connection with reply.
func listenIn(t *testing.T, path string, port int, reply string) {
	t.Helper()
	lnCh := make(chan net.Listener, 1)
	errCh := make(chan error, 1)
	go func() {
		runtime.LockOSThread() // never unlocked: the thread dies with this goroutine
		f, err := os.Open(path)
		if err != nil {
			errCh <- err
			return
		}
		defer f.Close()
		if err := unix.Setns(int(f.Fd()), unix.CLONE_NEWNET); err != nil {
			errCh <- err
			return
		}
		ln, err := net.Listen("tcp4", fmt.Sprintf("0.0.0.0:%d", port))
		if err != nil {
			errCh <- err
			return
		}
		lnCh <- ln
	}()
	var ln net.Listener
	select {
	case err := <-errCh:
		t.Fatal(err)
	case ln = <-lnCh:
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			io.WriteString(c, reply)
			c.Close()
		}
	}()
	t.Cleanup(func() { ln.Close(); <-done })
}

func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

func iptablesRules(t *testing.T) string {
	t.Helper()
	var out []string
	for _, table := range []string{"filter", "nat"} {
		b, err := exec.Command("iptables-save", "-t", table).CombinedOutput()
		if err != nil {
			t.Fatalf("iptables-save: %v: %s", err, b)
		}
		out = append(out, string(b))
	}
	return strings.Join(out, "\n")
}

// A bridge namespace is wired (an address of the subnet, the port
// published from the host), kept by a second Setup (an agent restart),
// and torn down without leaving a namespace, a record or an iptables rule,
// twice without error.
func TestBridgeSetupTeardown(t *testing.T) {
	m := testManager(t)
	ctx := context.Background()
	id := "0f2c4e8a-bridge-test-" + fmt.Sprint(os.Getpid())
	host := freePort(t)
	req := &Request{AllocID: id, Mode: "bridge", Ports: []Port{{HostIP: "127.0.0.1", HostPort: host, ContainerPort: 8080}}}
	st, err := m.Setup(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Teardown(context.Background(), id) })
	if !strings.HasPrefix(st.IP, "172.26.") || !isNetns(st.Path) {
		t.Fatalf("status %+v: want an address of %s and a namespace", st, DefaultSubnet)
	}
	if !strings.Contains(iptablesRules(t), st.IP) {
		t.Fatalf("no iptables rule names the allocation's address %s", st.IP)
	}
	listenIn(t, st.Path, 8080, "hello from the namespace")
	c, err := net.Dial("tcp4", fmt.Sprintf("127.0.0.1:%d", host))
	if err != nil {
		t.Fatalf("dial the published port: %v", err)
	}
	b, _ := io.ReadAll(c)
	c.Close()
	if string(b) != "hello from the namespace" {
		t.Fatalf("read %q through the published port", b)
	}

	again, err := m.Setup(ctx, req)
	if err != nil || *again != *st {
		t.Fatalf("second Setup = %+v, %v; want %+v kept", again, err, st)
	}

	for i := 0; i < 2; i++ {
		if err := m.Teardown(ctx, id); err != nil {
			t.Fatalf("teardown %d: %v", i, err)
		}
	}
	if _, err := os.Stat(st.Path); !os.IsNotExist(err) {
		t.Fatalf("namespace file after teardown: %v", err)
	}
	if _, err := os.Stat(m.recordPath(id)); !os.IsNotExist(err) {
		t.Fatalf("record after teardown: %v", err)
	}
	if rules := iptablesRules(t); strings.Contains(rules, st.IP+"/") || strings.Contains(rules, fmt.Sprintf("--dport %d", host)) {
		t.Fatalf("iptables rules of the allocation left:\n%s", rules)
	}
}

// Sweep removes what no known allocation owns and keeps the others.
func TestSweep(t *testing.T) {
	m := testManager(t)
	ctx := context.Background()
	keep, orphan := fmt.Sprintf("keep-%d", os.Getpid()), fmt.Sprintf("orphan-%d", os.Getpid())
	for _, id := range []string{keep, orphan} {
		if _, err := m.Setup(ctx, &Request{AllocID: id, Mode: "bridge"}); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { m.Teardown(context.Background(), id) })
	}
	removed, err := m.Sweep(ctx, func(id string) bool { return id == keep })
	if err != nil || len(removed) != 1 || removed[0] != orphan {
		t.Fatalf("Sweep = %v, %v; want [%s]", removed, err, orphan)
	}
	if !isNetns(m.nsPath(keep)) || isNetns(m.nsPath(orphan)) {
		t.Fatal("Sweep removed the wrong namespace")
	}
}

func TestConfigErrors(t *testing.T) {
	cases := []struct {
		cfg  Config
		want string
	}{
		{Config{NetnsDir: "/x", CacheDir: "/y", Subnet: "nope"}, "bridge_network_subnet"},
		{Config{NetnsDir: "/x", CacheDir: "/y", BridgeName: "a-very-long-bridge-name"}, "bridge_network_name"},
		{Config{}, "netns and cache dirs"},
		{Config{NetnsDir: "/x", CacheDir: "/y", SubnetIPv6: "10.0.0.0/8"}, "bridge_network_subnet_ipv6"},
	}
	for _, tc := range cases {
		if _, err := tc.cfg.withDefaults(); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: err = %v, want %q", tc.cfg, err, tc.want)
		}
	}
}

// Mode "cni/<name>" wires the namespace with the operator's conflist of
// that name from the config dir; a name no conflist has is a clear error
// that leaves nothing behind.
func TestOperatorCNINetwork(t *testing.T) {
	m := testManager(t)
	ctx := context.Background()
	m.cfg.ConfigDir = t.TempDir()
	// A bridge of this test's own (others' tests may run at once).
	br := fmt.Sprintf("drvcni%d", os.Getpid()%1000000)
	if _, err := net.InterfaceByName(br); err == nil {
		t.Skipf("bridge %s exists already: not ours to use", br)
	}
	conf := `{"cniVersion": "1.0.0", "name": "mynet", "plugins": [
  {"type": "bridge", "bridge": "` + br + `", "isGateway": true, "ipMasq": true,
   "ipam": {"type": "host-local", "ranges": [[{"subnet": "10.99.7.0/24"}]], "routes": [{"dst": "0.0.0.0/0"}]}},
  {"type": "portmap", "capabilities": {"portMappings": true}}
]}`
	if err := os.WriteFile(filepath.Join(m.cfg.ConfigDir, "10-mynet.conflist"), []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	id := fmt.Sprintf("cni-test-%d", os.Getpid())
	st, err := m.Setup(ctx, &Request{AllocID: id, Mode: "cni/mynet"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		m.Teardown(context.Background(), id)
		exec.Command("ip", "link", "del", br).Run()
	})
	if !strings.HasPrefix(st.IP, "10.99.7.") {
		t.Fatalf("address %q, want one of the operator's 10.99.7.0/24", st.IP)
	}
	if attrs := Fingerprint(ctx, m.cfg.PluginDirs, m.cfg.ConfigDir); attrs[ConfigAttrPrefix+"mynet"] != "true" || attrs[PluginAttrPrefix+"bridge"] == "" {
		t.Errorf("fingerprint %v: want plugins.cni.config.mynet and plugins.cni.version.bridge", attrs)
	}
	if err := m.Teardown(ctx, id); err != nil {
		t.Fatal(err)
	}
	if isNetns(st.Path) {
		t.Fatal("namespace left after teardown")
	}

	other := id + "-missing"
	_, err = m.Setup(ctx, &Request{AllocID: other, Mode: "cni/nosuch"})
	if err == nil || !strings.Contains(err.Error(), `load CNI network "nosuch" from cni_config_dir`) {
		t.Fatalf("err = %v, want the missing network named", err)
	}
	if _, err := os.Stat(m.nsPath(other)); !os.IsNotExist(err) {
		t.Fatalf("a failed setup left %s: %v", m.nsPath(other), err)
	}
}

// A namespace made by someone else (a driver's infra container) is wired
// in place: bind-mounted as the allocation's, with the group's CNI args
// (host-local's IP picks the address); a different source later (the
// infra container was replaced) is wired anew; teardown leaves the source
// namespace to its maker.
func TestSetupSourceNamespace(t *testing.T) {
	m := testManager(t)
	ctx := context.Background()
	dir := t.TempDir()
	src, src2 := filepath.Join(dir, "infra"), filepath.Join(dir, "infra2")
	for _, p := range []string{src, src2} {
		if err := createNetns(p); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { removeNetns(p) })
	}
	id := fmt.Sprintf("source-test-%d", os.Getpid())
	want := fmt.Sprintf("172.26.%d.%d", 64+os.Getpid()%15, 2+os.Getpid()%250)
	req := &Request{AllocID: id, Mode: "bridge", Source: src, Args: map[string]string{"IgnoreUnknown": "1", "IP": want, "NOMAD_ALLOC_ID": id}}
	st, err := m.Setup(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Teardown(context.Background(), id) })
	if st.IP != want || st.InterfaceName != "eth0" || !sameFile(st.Path, src) {
		t.Fatalf("status %+v: want %s on eth0 in the source namespace", st, want)
	}
	req2 := *req
	req2.Source = src2
	st2, err := m.Setup(ctx, &req2)
	if err != nil {
		t.Fatal(err)
	}
	if !sameFile(st2.Path, src2) || sameFile(st2.Path, src) || st2.IP != want {
		t.Fatalf("status %+v after the source changed: want the new namespace wired", st2)
	}
	if err := m.Teardown(ctx, id); err != nil {
		t.Fatal(err)
	}
	if !isNetns(src2) || isNetns(m.nsPath(id)) {
		t.Fatal("teardown removed the source namespace, or left the allocation's")
	}
}

// The CNI args of a request reach the plugins sorted by key; none: none.
func TestRuntimeConfArgs(t *testing.T) {
	m := &Manager{cfg: Config{NetnsDir: "/n"}}
	rt := m.runtimeConf(&Request{AllocID: "a", Args: map[string]string{"b": "2", "a": "1"}})
	if len(rt.Args) != 2 || rt.Args[0] != [2]string{"a", "1"} || rt.Args[1] != [2]string{"b", "2"} {
		t.Fatalf("args %v", rt.Args)
	}
	if rt := m.runtimeConf(&Request{AllocID: "a"}); rt.Args != nil {
		t.Fatalf("args %v, want none", rt.Args)
	}
}

// With bridge_network_subnet_ipv6 the allocation gets an IPv6 address of
// it besides its IPv4 one.
func TestBridgeIPv6(t *testing.T) {
	m := testManager(t)
	if b, err := os.ReadFile("/proc/sys/net/ipv6/conf/all/disable_ipv6"); err != nil || strings.TrimSpace(string(b)) != "0" {
		t.Skipf("IPv6 is disabled on this host (/proc/sys/net/ipv6/conf/all/disable_ipv6: %q, %v)", b, err)
	}
	if _, err := exec.LookPath("ip6tables"); err != nil {
		t.Skip("ip6tables is not installed")
	}
	// A bridge and subnets of this test's own: the shared "nomad" bridge
	// is other tests' too.
	m.cfg.BridgeName = fmt.Sprintf("drv6%d", os.Getpid()%1000000)
	m.cfg.Subnet = "10.98.6.0/24"
	m.cfg.SubnetIPv6 = "fd00:d0:6::/64"
	if _, err := m.cfg.withDefaults(); err != nil {
		t.Fatal(err)
	}
	id := fmt.Sprintf("ipv6-test-%d", os.Getpid())
	st, err := m.Setup(context.Background(), &Request{AllocID: id, Mode: "bridge"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		m.Teardown(context.Background(), id)
		exec.Command("ip", "link", "del", m.cfg.BridgeName).Run()
	})
	if !strings.HasPrefix(st.IP, "10.98.6.") || !strings.HasPrefix(st.IPv6, "fd00:d0:6:") {
		t.Fatalf("status %+v: want addresses of both subnets", st)
	}
}

// resultStatus takes the first IPv4 and IPv6 addresses of a CNI result
// and the namespace-side interface they are on.
func TestResultStatus(t *testing.T) {
	idx := func(i int) *int { return &i }
	res := &types100.Result{
		CNIVersion: "1.0.0",
		Interfaces: []*types100.Interface{{Name: "veth1234"}, {Name: "eth0", Sandbox: "/netns/a"}},
		IPs: []*types100.IPConfig{
			{Interface: idx(1), Address: net.IPNet{IP: net.ParseIP("fd00::5"), Mask: net.CIDRMask(64, 128)}},
			{Interface: idx(1), Address: net.IPNet{IP: net.ParseIP("172.26.64.5").To4(), Mask: net.CIDRMask(20, 32)}},
			{Interface: idx(1), Address: net.IPNet{IP: net.ParseIP("172.26.64.6").To4(), Mask: net.CIDRMask(20, 32)}},
		},
	}
	st, err := resultStatus("/netns/a", res)
	if err != nil {
		t.Fatal(err)
	}
	want := Status{Path: "/netns/a", InterfaceName: "eth0", IP: "172.26.64.5", IPv6: "fd00::5"}
	if *st != want {
		t.Fatalf("status %+v, want %+v", *st, want)
	}
	st, err = resultStatus("/netns/b", &types100.Result{CNIVersion: "1.0.0"})
	if err != nil || *st != (Status{Path: "/netns/b", InterfaceName: "eth0"}) {
		t.Fatalf("empty result: %+v, %v", st, err)
	}
}
