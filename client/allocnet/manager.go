package allocnet

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/containernetworking/cni/libcni"
	"github.com/containernetworking/cni/pkg/types"
	types100 "github.com/containernetworking/cni/pkg/types/100"

	"github.com/drover-io/drover/structs"
)

// Port is a port published from the host into the allocation's
// namespace: HostPort on HostIP ("": every address) to ContainerPort.
type Port struct {
	HostIP        string `json:"host_ip,omitempty"`
	HostPort      int    `json:"host_port"`
	ContainerPort int    `json:"container_port"`
}

// Request is what an allocation's network is wired with.
type Request struct {
	AllocID string `json:"alloc_id"`
	// Mode is structs.NetworkModeBridge or "cni/<name>".
	Mode  string `json:"mode"`
	Ports []Port `json:"ports,omitempty"`
	// Source, when set, is a network namespace someone else made (a
	// driver's infra container: /proc/<pid>/ns/net) to wire instead of a
	// new one. It is bind-mounted on the allocation's namespace file,
	// which keeps it alive and is what the tasks join.
	Source string `json:"source,omitempty"`
	// Args are the group's cni { args }: every plugin's CNI_ARGS.
	Args map[string]string `json:"args,omitempty"`
}

// Status is an allocation's wired network: its namespace, interface and
// addresses (IPv4, and IPv6 when the network gives one).
type Status struct {
	Path          string
	InterfaceName string
	IP            string
	IPv6          string
}

// Manager creates, wires and removes allocations' network namespaces.
// It is safe for concurrent use for different allocations.
type Manager struct {
	cfg    Config
	cni    *libcni.CNIConfig
	logger *slog.Logger
}

// New returns a Manager, or an error naming a bad Config field.
func New(cfg Config, logger *slog.Logger) (*Manager, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	for _, d := range []string{cfg.NetnsDir, cfg.CacheDir} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return nil, fmt.Errorf("allocnet: %w", err)
		}
	}
	return &Manager{cfg: cfg, cni: libcni.NewCNIConfigWithCacheDir(cfg.PluginDirs, cfg.CacheDir, nil), logger: logger}, nil
}

// Supported reports whether mode is one the Manager wires.
func Supported(mode string) bool {
	return mode == structs.NetworkModeBridge || strings.HasPrefix(mode, structs.NetworkModeCNIPrefix)
}

func (m *Manager) nsPath(allocID string) string { return filepath.Join(m.cfg.NetnsDir, allocID) }
func (m *Manager) recordPath(allocID string) string {
	return filepath.Join(m.cfg.NetnsDir, allocID+".json")
}

// confList returns the CNI network of mode.
func (m *Manager) confList(mode string) (*libcni.NetworkConfigList, error) {
	if mode == structs.NetworkModeBridge {
		b, err := m.cfg.bridgeConfList()
		if err != nil {
			return nil, err
		}
		return libcni.ConfListFromBytes(b)
	}
	name, ok := strings.CutPrefix(mode, structs.NetworkModeCNIPrefix)
	if !ok || name == "" {
		return nil, fmt.Errorf("network mode %q is not a bridge or CNI mode", mode)
	}
	list, err := libcni.LoadConfList(m.cfg.ConfigDir, name)
	if err != nil {
		return nil, fmt.Errorf("network mode %q: load CNI network %q from cni_config_dir %s: %w", mode, name, m.cfg.ConfigDir, err)
	}
	return list, nil
}

// runtimeConf is the CNI runtime config of req.
func (m *Manager) runtimeConf(req *Request) *libcni.RuntimeConf {
	var mappings []map[string]any
	for _, p := range req.Ports {
		to := p.ContainerPort
		if to == 0 {
			to = p.HostPort
		}
		for _, proto := range []string{"tcp", "udp"} {
			pm := map[string]any{"hostPort": p.HostPort, "containerPort": to, "protocol": proto}
			if p.HostIP != "" {
				pm["hostIP"] = p.HostIP
			}
			mappings = append(mappings, pm)
		}
	}
	rt := &libcni.RuntimeConf{ContainerID: req.AllocID, NetNS: m.nsPath(req.AllocID), IfName: ifName}
	for _, k := range slices.Sorted(maps.Keys(req.Args)) {
		rt.Args = append(rt.Args, [2]string{k, req.Args[k]})
	}
	if len(mappings) > 0 {
		rt.CapabilityArgs = map[string]any{"portMappings": mappings}
	}
	return rt
}

// Setup gives the allocation its namespace, wired; an allocation that has
// one already (an agent restart) keeps it. On failure nothing is left.
func (m *Manager) Setup(ctx context.Context, req *Request) (*Status, error) {
	if req == nil || req.AllocID == "" || strings.ContainsAny(req.AllocID, "/.") {
		return nil, errors.New("allocnet: a request with a valid alloc id is required")
	}
	list, err := m.confList(req.Mode)
	if err != nil {
		return nil, err
	}
	path := m.nsPath(req.AllocID)
	rt := m.runtimeConf(req)
	if isNetns(path) {
		switch res, err := m.cni.GetNetworkListCachedResult(list, rt); {
		case req.Source != "" && !sameFile(path, req.Source):
			// The namespace's maker replaced it (an infra container that
			// was restarted): wire the new one.
			m.logger.Warn("the allocation's network namespace is not its infra container's any more; wiring the new one", "alloc_id", req.AllocID, "source", req.Source)
		case err == nil && res != nil:
			st, err := resultStatus(path, res)
			if err == nil {
				m.logger.Info("kept the allocation's network namespace", "alloc_id", req.AllocID, "netns", path, "ip", st.IP)
				return st, nil
			}
			m.logger.Warn("the allocation's cached CNI result is unreadable; wiring it again", "alloc_id", req.AllocID, "error", err)
		default:
			// A namespace without its result: wired halfway. Start over.
			m.logger.Warn("the allocation's network namespace has no CNI result; wiring it again", "alloc_id", req.AllocID)
		}
		if err := m.Teardown(ctx, req.AllocID); err != nil {
			return nil, err
		}
	}
	rec, err := json.Marshal(req)
	if err != nil {
		return nil, err
	}
	// The record first: whatever happens next, Teardown knows what to undo.
	if err := os.WriteFile(m.recordPath(req.AllocID), rec, 0o600); err != nil {
		return nil, fmt.Errorf("allocnet: record network: %w", err)
	}
	// A file left by a crash before the bind mount.
	if err := removeNetns(path); err != nil {
		return nil, err
	}
	if req.Source != "" {
		err = bindNetns(req.Source, path)
	} else {
		err = createNetns(path)
	}
	if err != nil {
		os.Remove(m.recordPath(req.AllocID))
		return nil, err
	}
	res, err := m.cni.AddNetworkList(ctx, list, rt)
	if err == nil {
		var st *Status
		if st, err = resultStatus(path, res); err == nil {
			m.logger.Info("wired the allocation's network namespace", "alloc_id", req.AllocID, "mode", req.Mode, "netns", path, "ip", st.IP, "ipv6", st.IPv6)
			return st, nil
		}
	}
	err = fmt.Errorf("network mode %q: CNI add: %w", req.Mode, err)
	if terr := m.Teardown(context.WithoutCancel(ctx), req.AllocID); terr != nil {
		err = errors.Join(err, terr)
	}
	return nil, err
}

// resultStatus is the Status of the namespace at path from its CNI
// result: the first IPv4 and the first IPv6 address, and the interface
// they are on (that of the first address that names one; else ifName).
func resultStatus(path string, res types.Result) (*Status, error) {
	r, err := types100.NewResultFromResult(res)
	if err != nil {
		return nil, fmt.Errorf("read CNI result: %w", err)
	}
	st := &Status{Path: path, InterfaceName: ifName}
	named := false
	for _, ipc := range r.IPs {
		if ipc == nil {
			continue
		}
		if ip4 := ipc.Address.IP.To4(); ip4 != nil {
			if st.IP != "" {
				continue
			}
			st.IP = net.IP(ip4).String()
		} else if ipc.Address.IP != nil {
			if st.IPv6 != "" {
				continue
			}
			st.IPv6 = ipc.Address.IP.String()
		}
		if i := ipc.Interface; !named && i != nil && *i >= 0 && *i < len(r.Interfaces) && r.Interfaces[*i].Sandbox != "" {
			st.InterfaceName, named = r.Interfaces[*i].Name, true
		}
	}
	return st, nil
}

// Teardown undoes Setup for the allocation: CNI DEL with the network it
// was wired with, then the namespace and its record are removed. An
// allocation with nothing left is fine.
func (m *Manager) Teardown(ctx context.Context, allocID string) error {
	if allocID == "" || strings.ContainsAny(allocID, "/.") {
		return errors.New("allocnet: a valid alloc id is required")
	}
	b, err := os.ReadFile(m.recordPath(allocID))
	if errors.Is(err, os.ErrNotExist) {
		return removeNetns(m.nsPath(allocID))
	}
	if err != nil {
		return fmt.Errorf("allocnet: read network record: %w", err)
	}
	var req Request
	if err := json.Unmarshal(b, &req); err != nil || req.AllocID != allocID {
		m.logger.Warn("unreadable network record; removing the namespace only", "alloc_id", allocID, "error", err)
		return errors.Join(removeNetns(m.nsPath(allocID)), os.Remove(m.recordPath(allocID)))
	}
	var errs []error
	list, err := m.confList(req.Mode)
	if err == nil {
		rt := m.runtimeConf(&req)
		if !isNetns(rt.NetNS) {
			rt.NetNS = "" // plugins clean up host-side state without it
		}
		err = m.cni.DelNetworkList(ctx, list, rt)
	}
	if err != nil {
		// Keep the record: a later teardown or Sweep retries.
		return fmt.Errorf("network mode %q: CNI del: %w", req.Mode, err)
	}
	errs = append(errs, removeNetns(m.nsPath(allocID)))
	if err := os.Remove(m.recordPath(allocID)); err != nil && !errors.Is(err, os.ErrNotExist) {
		errs = append(errs, err)
	}
	if err := errors.Join(errs...); err != nil {
		return err
	}
	m.logger.Info("removed the allocation's network namespace", "alloc_id", allocID)
	return nil
}

// Sweep tears down the namespaces of allocations keep does not know:
// those a crashed agent left behind. It returns the ones it removed.
func (m *Manager) Sweep(ctx context.Context, keep func(allocID string) bool) ([]string, error) {
	entries, err := os.ReadDir(m.cfg.NetnsDir)
	if err != nil {
		return nil, fmt.Errorf("allocnet: sweep: %w", err)
	}
	seen := map[string]bool{}
	var removed []string
	var errs []error
	for _, e := range entries {
		id := strings.TrimSuffix(e.Name(), ".json")
		if seen[id] || keep(id) || strings.ContainsAny(id, "/.") {
			continue
		}
		seen[id] = true
		if err := m.Teardown(ctx, id); err != nil {
			errs = append(errs, err)
			continue
		}
		removed = append(removed, id)
	}
	return removed, errors.Join(errs...)
}
