package docker

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/drover-io/drover/drivers/shared/testwait"
	"github.com/drover-io/drover/plugins/drivers"
)

// execOut runs cmd in the task's container and returns its stdout.
func (h *harness) execOut(cfg *drivers.TaskConfig, cmd string) string {
	h.t.Helper()
	res, err := h.d.ExecTask(context.Background(), cfg.ID, []string{"sh", "-c", cmd}, 30*time.Second)
	if err != nil {
		h.t.Fatalf("exec %q: %v", cmd, err)
	}
	return strings.TrimSpace(string(res.Stdout))
}

// capMask is the CapEff bit mask of caps (names of allCaps).
func capMask(caps []string) uint64 {
	var m uint64
	for _, c := range caps {
		m |= 1 << slices.Index(allCaps, c)
	}
	return m
}

// capEff reads the container's effective capabilities.
func (h *harness) capEff(cfg *drivers.TaskConfig) uint64 {
	h.t.Helper()
	line := h.execOut(cfg, "grep CapEff /proc/self/status")
	v, err := strconv.ParseUint(strings.TrimSpace(strings.TrimPrefix(line, "CapEff:")), 16, 64)
	if err != nil {
		h.t.Fatalf("CapEff %q: %v", line, err)
	}
	return v
}

// TestTaskOptions runs a container with every process, limit and
// security option Nomad's driver has, and checks each both as the daemon
// records it and as the task sees it.
func TestTaskOptions(t *testing.T) {
	h := newHarness(t, nil)
	h.d.cpuMHz = func() float64 { return 2000 }
	conf := TaskConfig{
		Entrypoint:       []string{"/bin/sh", "-c"},
		Args:             []string{"echo \"ready in $(pwd) as $(hostname) with nofile $(ulimit -n):$(ulimit -Hn)\"; exec sleep 1000"},
		WorkDir:          "/alloc",
		Hostname:         "drover-host",
		Labels:           StringMap{"team": "infra"},
		Init:             true,
		ReadonlyRootfs:   true,
		Ulimit:           StringMap{"nofile": "1024:2048", "nproc": "300"},
		Sysctl:           StringMap{"kernel.shmmax": "1048576"},
		PidsLimit:        64,
		ShmSize:          8 << 20,
		MemoryHardLimit:  128,
		CPUHardLimit:     true,
		CPUCFSPeriod:     50000,
		Healthchecks:     HealthchecksConfig{Disable: true},
		DNSServers:       []string{"10.0.0.53"},
		DNSSearchDomains: []string{"drover.test"},
		DNSOptions:       []string{"ndots:2"},
		ExtraHosts:       []string{"db.drover.test:10.1.2.3"},
		CapDrop:          []string{"mknod"},
		SecurityOpt:      []string{"no-new-privileges"},
		Devices:          []DeviceConfig{{HostPath: "/dev/null", ContainerPath: "/dev/drover-null", CgroupPermissions: "rw"}},
		Logging:          LoggingConfig{Type: "json-file", Config: StringMap{"max-size": "1m", "max-file": "1"}},
	}
	cfg := h.config(conf)
	cfg.Resources = &drivers.Resources{CPUShares: 400, MemoryMB: 64}
	h.start(cfg)
	testwait.FileContains(t, "ready", cfg.StdoutPath, "ready")

	// What the daemon recorded.
	info := h.inspect(cfg)
	hc, c := info.HostConfig, info.Config
	checks := []struct {
		what      string
		got, want any
	}{
		{"Hostname", c.Hostname, "drover-host"},
		{"WorkingDir", c.WorkingDir, "/alloc"},
		{"Entrypoint", fmt.Sprint(c.Entrypoint), "[/bin/sh -c]"},
		{"label team", c.Labels["team"], "infra"},
		{"Healthcheck", fmt.Sprint(c.Healthcheck.Test), "[NONE]"},
		{"Init", hc.Init != nil && *hc.Init, true},
		{"ReadonlyRootfs", hc.ReadonlyRootfs, true},
		{"Ulimits", fmt.Sprint(hc.Ulimits), "[nofile=1024:2048 nproc=300:300]"},
		{"Sysctls", hc.Sysctls["kernel.shmmax"], "1048576"},
		{"PidsLimit", *hc.PidsLimit, int64(64)},
		{"ShmSize", hc.ShmSize, int64(8 << 20)},
		{"Memory", hc.Memory, int64(128 << 20)},
		{"MemoryReservation", hc.MemoryReservation, int64(64 << 20)},
		{"CpuPeriod", hc.CPUPeriod, int64(50000)},
		{"CpuQuota", hc.CPUQuota, int64(10000)}, // 400 MHz of a 2000 MHz core
		{"Dns", fmt.Sprint(hc.DNS), "[10.0.0.53]"},
		{"DnsSearch", fmt.Sprint(hc.DNSSearch), "[drover.test]"},
		{"DnsOptions", fmt.Sprint(hc.DNSOptions), "[ndots:2]"},
		{"ExtraHosts", fmt.Sprint(hc.ExtraHosts), "[db.drover.test:10.1.2.3]"},
		{"CapDrop", fmt.Sprint(hc.CapDrop), "[NET_RAW MKNOD]"},
		{"SecurityOpt", fmt.Sprint(hc.SecurityOpt), "[no-new-privileges]"},
		{"Devices", fmt.Sprint(hc.Devices), "[{/dev/null /dev/drover-null rw}]"},
		{"LogConfig", fmt.Sprint(hc.LogConfig), "{json-file map[max-file:1 max-size:1m]}"},
	}
	for _, ch := range checks {
		if ch.got != ch.want {
			t.Errorf("%s = %v, want %v", ch.what, ch.got, ch.want)
		}
	}

	// What the task sees.
	// (The main process, not an exec: Docker 20.10 does not always give
	// an exec the container's soft limits.)
	if out := readFile(t, cfg.StdoutPath); !strings.Contains(out, "ready in /alloc as drover-host with nofile 1024:2048") {
		t.Errorf("entrypoint output %q", out)
	}
	seen := []struct{ cmd, want string }{
		{"cat /proc/1/comm", "docker-init"},
		{"touch /rootfs-write 2>/dev/null && echo writable || echo read-only", "read-only"},
		{"grep NoNewPrivs /proc/self/status | tr -d ' \t'", "NoNewPrivs:1"},
		{"grep ' /dev/shm ' /proc/mounts | grep -o 'size=[0-9]*k'", "size=8192k"},
		{"cat /sys/fs/cgroup/pids.max 2>/dev/null || cat /sys/fs/cgroup/pids/pids.max", "64"},
		{"cat /proc/sys/kernel/shmmax", "1048576"},
		{"grep -E '^(nameserver|search|options)' /etc/resolv.conf | sort", "nameserver 10.0.0.53\noptions ndots:2\nsearch drover.test"},
		{"grep db.drover.test /etc/hosts | tr '\t' ' '", "10.1.2.3 db.drover.test"},
		{"echo x > /dev/drover-null && echo written", "written"},
	}
	for _, s := range seen {
		if got := h.execOut(cfg, s.cmd); got != s.want {
			t.Errorf("%s: got %q, want %q", s.cmd, got, s.want)
		}
	}
	want := capMask(dockerDefaultCaps) &^ capMask([]string{"NET_RAW", "MKNOD"})
	if got := h.capEff(cfg); got != want {
		t.Errorf("CapEff = %x, want %x (Docker's defaults less NET_RAW and MKNOD)", got, want)
	}
}

// TestCapabilitiesAndPrivileged: the capabilities a task gets follow the
// plugin's allow_caps; privileged needs allow_privileged.
func TestCapabilitiesAndPrivileged(t *testing.T) {
	running := func(c TaskConfig) TaskConfig {
		c.Command, c.Args = "sh", []string{"-c", "echo ready; exec sleep 1000"}
		return c
	}
	cases := []struct {
		name    string
		plugin  *Config
		conf    TaskConfig
		want    uint64
		wantErr string
	}{
		{name: "default: Docker's less NET_RAW", conf: running(TaskConfig{}), want: capMask(dockerDefaultCaps) &^ capMask([]string{"NET_RAW"})},
		{name: "net_raw refused by default", conf: running(TaskConfig{CapAdd: []string{"net_raw"}}), wantErr: "allow_caps"},
		{name: "net_raw allowed", plugin: &Config{AllowCaps: append(slices.Clone(DefaultAllowCaps), "net_raw")}, conf: running(TaskConfig{CapAdd: []string{"net_raw"}}), want: capMask(dockerDefaultCaps)},
		{name: "sys_time added", plugin: &Config{AllowCaps: []string{"all"}}, conf: running(TaskConfig{CapAdd: []string{"sys_time"}, CapDrop: []string{"all"}}), want: capMask([]string{"SYS_TIME"})},
		{name: "privileged refused by default", conf: running(TaskConfig{Privileged: true}), wantErr: "allow_privileged = true"},
		{name: "privileged allowed", plugin: &Config{AllowPrivileged: true}, conf: running(TaskConfig{Privileged: true}), want: ^uint64(0)},
		{name: "unconfined seccomp refused by default", conf: running(TaskConfig{SecurityOpt: []string{"seccomp=unconfined"}}), wantErr: "allow_privileged = true"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, tc.plugin)
			cfg := h.config(tc.conf)
			if tc.wantErr != "" {
				_, err := h.d.StartTask(context.Background(), cfg)
				if err == nil {
					_ = h.d.DestroyTask(context.Background(), cfg.ID, true)
				}
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("StartTask err = %v, want %q", err, tc.wantErr)
				}
				return
			}
			if _, err := h.d.StartTask(context.Background(), cfg); err != nil {
				if tc.conf.Privileged && strings.Contains(err.Error(), "unable to apply caps") {
					t.Skipf("this host's capability bounding set cannot run privileged containers: %v", err)
				}
				t.Fatalf("StartTask: %v", err)
			}
			t.Cleanup(func() { _ = h.d.DestroyTask(context.Background(), cfg.ID, true) })
			testwait.FileContains(t, "ready", cfg.StdoutPath, "ready")
			got := h.capEff(cfg)
			if tc.want == ^uint64(0) {
				// Privileged: every capability the kernel has.
				if got&capMask(allCaps[:38]) != capMask(allCaps[:38]) {
					t.Fatalf("privileged CapEff = %x", got)
				}
				return
			}
			if got != tc.want {
				t.Fatalf("CapEff = %x, want %x", got, tc.want)
			}
		})
	}
}

// TestGCContainerDisabled: with gc { container = false } a destroyed
// task's container stays.
func TestGCContainerDisabled(t *testing.T) {
	keep := false
	h := newHarness(t, &Config{GC: GCConfig{Container: &keep}})
	cfg := h.config(shell("echo done"))
	th := h.start(cfg)
	h.wait(cfg.ID)
	if err := h.d.DestroyTask(context.Background(), cfg.ID, true); err != nil {
		t.Fatal(err)
	}
	id := containerIDOf(t, th)
	t.Cleanup(func() { _ = h.d.client.removeContainer(context.Background(), id, true) })
	if _, err := h.d.client.inspectContainer(context.Background(), id); err != nil {
		t.Fatalf("container removed despite gc { container = false }: %v", err)
	}
	if _, err := h.d.InspectTask(context.Background(), cfg.ID); err == nil {
		t.Fatal("the destroyed task is still known")
	}
}

// TestLoggingNone: a task whose log driver keeps nothing runs and exits
// normally; its output is not copied.
func TestLoggingNone(t *testing.T) {
	h := newHarness(t, nil)
	conf := shell("echo lost; exit 2")
	conf.Logging = LoggingConfig{Type: "none"}
	cfg := h.config(conf)
	h.start(cfg)
	if res := h.wait(cfg.ID); res.ExitCode != 2 {
		t.Fatalf("result = %+v", res)
	}
	if info := h.inspect(cfg); info.HostConfig.LogConfig.Type != "none" {
		t.Fatalf("LogConfig = %+v", info.HostConfig.LogConfig)
	}
	if got := readFile(t, cfg.StdoutPath); got != "" {
		t.Fatalf("stdout = %q", got)
	}
}
