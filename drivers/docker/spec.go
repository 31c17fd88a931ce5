package docker

import (
	"errors"
	"fmt"
	"maps"
	"net/netip"
	"path/filepath"
	"slices"
	"strings"

	"github.com/docker/go-units"
	"github.com/moby/moby/api/types/container"

	"github.com/drover-io/drover/plugins/drivers"
)

// specInput is what buildSpec needs besides the task: the plugin's config
// and the host's per-core CPU frequency (MHz), which converts a task's cpu
// to a CFS quota.
type specInput struct {
	plugin *Config
	cpuMHz float64
}

// buildSpec turns a task into the container to create. It checks every
// option against the plugin's policy (volumes, privileged, allow_caps,
// pids_limit) and returns errors that name the option.
func buildSpec(cfg *drivers.TaskConfig, conf *TaskConfig, env map[string]string, in specInput) (*containerCreate, error) {
	plugin := in.plugin
	if conf.Privileged && !plugin.AllowPrivileged {
		return nil, errors.New(`privileged containers are disabled: set allow_privileged = true in the docker plugin's config to allow them`)
	}
	cc := &containerCreate{
		Config: &container.Config{
			Image:      normalizeImage(conf.Image),
			Entrypoint: conf.Entrypoint,
			WorkingDir: conf.WorkDir,
			User:       cfg.User,
			Hostname:   conf.Hostname,
			Labels:     containerLabels(cfg, conf.Labels),
			Env:        envList(env),
		},
		HostConfig: &container.HostConfig{},
	}
	if conf.Command != "" {
		cc.Cmd = append([]string{conf.Command}, conf.Args...)
	} else if len(conf.Args) > 0 {
		cc.Cmd = conf.Args
	}
	if conf.Healthchecks.Disable {
		cc.Healthcheck = &container.HealthConfig{Test: []string{"NONE"}}
	}
	hc := cc.HostConfig
	hc.Privileged = conf.Privileged
	publishes := len(conf.Ports) > 0 || len(conf.PortMap) > 0
	if cfg.NetworkIsolation != nil {
		mode, err := joinInfra(cfg, conf)
		if err != nil {
			return nil, err
		}
		hc.NetworkMode = mode
	} else {
		hc.NetworkMode = container.NetworkMode(networkMode(conf.NetworkMode, cfg.NetworkMode, plugin.DefaultNetworkMode, publishes))
	}
	withPorts, err := setPorts(cc, cfg, conf, env) // ports.go
	if err != nil {
		return nil, err
	}
	cc.Env = envList(withPorts)
	hc.LogConfig = logConfig(conf.Logging, plugin.Logging)
	hc.ReadonlyRootfs = conf.ReadonlyRootfs
	hc.ShmSize = conf.ShmSize
	if conf.Init {
		init := true
		hc.Init = &init
	}
	if len(conf.Sysctl) > 0 {
		hc.Sysctls = conf.Sysctl
	}
	if err = setResources(hc, cfg.Resources, conf, in); err != nil {
		return nil, err
	}
	if hc.CapAdd, hc.CapDrop, err = capDelta(plugin.AllowCaps, conf.CapAdd, conf.CapDrop); err != nil {
		return nil, err
	}
	if hc.Ulimits, err = ulimits(conf.Ulimit); err != nil {
		return nil, err
	}
	if err := setDNS(hc, conf); err != nil {
		return nil, err
	}

	paths := hostPaths{taskDir: cfg.TaskDir.Dir, allocDir: cfg.AllocDir, enabled: plugin.volumesEnabled(),
		selinuxLabel: plugin.Volumes.SELinuxLabel, volumeDriver: conf.VolumeDriver}
	if conf.VolumeDriver != "" {
		if !paths.enabled {
			return nil, fmt.Errorf("volume_driver %q needs volumes { enabled = true } in the docker plugin's config", conf.VolumeDriver)
		}
		hc.VolumeDriver = conf.VolumeDriver
	}
	if hc.SecurityOpt, err = securityOpts(conf.SecurityOpt, paths, plugin.AllowPrivileged); err != nil {
		return nil, err
	}
	hc.Binds = taskDirBinds(cfg, plugin.Volumes.SELinuxLabel)
	for _, v := range conf.Volumes {
		bind, err := paths.volume(v)
		if err != nil {
			return nil, err
		}
		hc.Binds = append(hc.Binds, bind)
	}
	for i, m := range conf.Mounts {
		dm, err := paths.mount(m)
		if err != nil {
			return nil, fmt.Errorf("mount %d: %w", i+1, err)
		}
		hc.Mounts = append(hc.Mounts, dm)
	}
	if hc.Devices, err = taskDevices(conf.Devices); err != nil {
		return nil, err
	}
	applyDeviceReservations(hc, cfg)
	return cc, nil
}

// normalizeImage drops the https:// (or http://) that Nomad allows before
// an image's registry.
func normalizeImage(image string) string {
	for _, p := range []string{"https://", "http://"} {
		image = strings.TrimPrefix(image, p)
	}
	return image
}

// logConfig is the task's logging block, else the plugin's. The driver
// reads logs back through the logs endpoint: json-file, local and journald
// always allow that, other drivers when the daemon keeps a local copy
// (Docker 20.10's default "dual logging").
func logConfig(task, plugin LoggingConfig) container.LogConfig {
	typ := task.Type
	if typ == "" {
		typ = task.Driver
	}
	if typ == "" && task.Config == nil {
		return container.LogConfig{Type: plugin.Type, Config: plugin.Config}
	}
	if typ == "" {
		typ = defaultLogDriver
	}
	return container.LogConfig{Type: typ, Config: task.Config}
}

// setResources maps the task's resources. Memory: the hard limit is
// memory_hard_limit or memory_max, whichever is higher, with memory as
// the reservation; without either, memory is the hard limit. Swap is not
// allowed beyond the limit. CPU is in shares (MHz, at least Docker's
// minimum of 2); cpu_hard_limit adds a CFS quota worth the task's MHz.
// pids_limit is the task's, bounded by the plugin's.
func setResources(hc *container.HostConfig, r *drivers.Resources, conf *TaskConfig, in specInput) error {
	if conf.MemoryHardLimit < 0 || conf.ShmSize < 0 || conf.PidsLimit < 0 {
		return errors.New("memory_hard_limit, shm_size and pids_limit must not be negative")
	}
	const mb = 1 << 20
	if r == nil {
		r = &drivers.Resources{}
	}
	hard := max(conf.MemoryHardLimit, r.MemoryMaxMB)
	switch {
	case conf.MemoryHardLimit > 0 && r.MemoryMB > 0 && conf.MemoryHardLimit < r.MemoryMB:
		return fmt.Errorf("memory_hard_limit (%d MB) is below the task's memory (%d MB), which becomes the reservation: raise it or remove it", conf.MemoryHardLimit, r.MemoryMB)
	case hard > r.MemoryMB && r.MemoryMB > 0:
		hc.Memory = hard * mb
		hc.MemoryReservation = r.MemoryMB * mb
	case hard > 0 && r.MemoryMB == 0:
		hc.Memory = hard * mb
	case r.MemoryMB > 0:
		hc.Memory = r.MemoryMB * mb
	}
	if hc.Memory > 0 {
		hc.MemorySwap = hc.Memory
	}
	if r.CPUShares > 0 {
		hc.CPUShares = max(r.CPUShares, 2)
	}
	if conf.CPUHardLimit {
		period := conf.CPUCFSPeriod
		if period < 1000 || period > 1000000 {
			return fmt.Errorf("cpu_cfs_period %d: use 1000 to 1000000 (µs)", period)
		}
		if r.CPUShares <= 0 {
			return errors.New("cpu_hard_limit needs the task's resources to set cpu")
		}
		mhz := in.cpuMHz
		if mhz <= 0 {
			mhz = defaultCPUMHz
		}
		hc.CPUPeriod = period
		hc.CPUQuota = max(int64(float64(r.CPUShares)/mhz*float64(period)), 1000)
	}
	limit := in.plugin.PidsLimit
	if conf.PidsLimit > 0 {
		if limit > 0 && conf.PidsLimit > limit {
			return fmt.Errorf("pids_limit %d is above the docker plugin's pids_limit (%d)", conf.PidsLimit, limit)
		}
		limit = conf.PidsLimit
	}
	if limit > 0 {
		hc.PidsLimit = &limit
	}
	return nil
}

// ulimits parses the ulimit map: limit name to "soft[:hard]".
func ulimits(m StringMap) ([]*container.Ulimit, error) {
	var out []*container.Ulimit
	for _, name := range slices.Sorted(maps.Keys(m)) {
		u, err := units.ParseUlimit(name + "=" + m[name])
		if err != nil {
			return nil, fmt.Errorf("ulimit %s = %q: %w", name, m[name], err)
		}
		out = append(out, u)
	}
	return out, nil
}

// setDNS sets the DNS options and extra hosts.
func setDNS(hc *container.HostConfig, conf *TaskConfig) error {
	for _, s := range conf.DNSServers {
		ip, err := netip.ParseAddr(s)
		if err != nil {
			return fmt.Errorf("dns_servers: %q is not an IP address", s)
		}
		hc.DNS = append(hc.DNS, ip)
	}
	hc.DNSSearch = conf.DNSSearchDomains
	hc.DNSOptions = conf.DNSOptions
	for _, h := range conf.ExtraHosts {
		host, ip, ok := strings.Cut(h, ":")
		if _, err := netip.ParseAddr(strings.Trim(ip, "[]")); !ok || host == "" || (err != nil && ip != "host-gateway") {
			return fmt.Errorf("extra_hosts: %q: want \"host:ip\"", h)
		}
	}
	hc.ExtraHosts = conf.ExtraHosts
	return nil
}

// taskDirBinds mounts the alloc's shared dir at /alloc and the task's
// local and secrets dirs at /local and /secrets, where they exist, with
// the plugin's SELinux label.
func taskDirBinds(cfg *drivers.TaskConfig, selinuxLabel string) []string {
	shared := cfg.TaskDir.SharedDir
	if shared == "" && cfg.AllocDir != "" {
		shared = filepath.Join(cfg.AllocDir, "alloc")
	}
	var binds []string
	for _, b := range []struct{ host, ctr string }{
		{shared, containerAllocDir},
		{cfg.TaskDir.LocalDir, containerLocalDir},
		{cfg.TaskDir.SecretsDir, containerSecretsDir},
	} {
		if b.host == "" {
			continue
		}
		bind := b.host + ":" + b.ctr
		if selinuxLabel != "" {
			bind += ":" + selinuxLabel
		}
		binds = append(binds, bind)
	}
	return binds
}

// joinInfra is the network mode of a task in a bridge or CNI group: the
// allocation's infra container's network ("container:<id>", network.go).
// The options Docker refuses with it (the namespace's hostname, DNS and
// published ports are the group's) are errors that say where they go.
func joinInfra(cfg *drivers.TaskConfig, conf *TaskConfig) (container.NetworkMode, error) {
	id := cfg.NetworkIsolation.Labels[drivers.NetworkLabelSandboxContainer]
	if id == "" {
		return "", fmt.Errorf("network mode %q: the allocation's network namespace has no infra container for docker to join (it was made by the client, not the docker driver)", cfg.NetworkMode)
	}
	var bad []string
	if conf.NetworkMode != "" {
		bad = append(bad, "network_mode")
	}
	if conf.Hostname != "" {
		bad = append(bad, "hostname (use the group network's hostname)")
	}
	if len(conf.DNSServers)+len(conf.DNSSearchDomains)+len(conf.DNSOptions) > 0 {
		bad = append(bad, "dns_servers, dns_search_domains and dns_options (use the group network's dns block)")
	}
	if len(conf.ExtraHosts) > 0 {
		bad = append(bad, "extra_hosts")
	}
	if len(bad) > 0 {
		return "", fmt.Errorf("network mode %q: the task joins the group's network namespace, which sets its own %s: remove them from the task's config", cfg.NetworkMode, strings.Join(bad, ", "))
	}
	return container.NetworkMode("container:" + id), nil
}
