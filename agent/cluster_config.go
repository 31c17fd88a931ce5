package agent

import (
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/drover-io/drover/server"
)

// The agent's side of a cluster of servers: every server outside dev
// mode serves rpcapi's wire and raft on its RPC port and gossips on its
// serf port (server.ClusterConfig); the addresses it gives others are the
// advertise block's, else its bind addresses, else (binding every
// interface) this host's first private IPv4 address, as Nomad picks them.

// clusterConfig returns the cluster configuration of this agent's server,
// serving rpcLn.
func (a *Agent) clusterConfig(rpcLn net.Listener, rs *raftStores) (*server.ClusterConfig, error) {
	c := a.cfg
	rpcPort := rpcLn.Addr().(*net.TCPAddr).Port
	rpcAdv, err := advertiseAddr(c.Advertise.RPC, c.rpcBind(), rpcPort)
	if err != nil {
		return nil, fmt.Errorf("advertise.rpc: %w", err)
	}
	serfBind := net.JoinHostPort(c.serfBind(), strconv.Itoa(c.SerfPort))
	serfAdv := ""
	if c.Advertise.Serf != "" || isUnspecified(c.serfBind()) {
		if serfAdv, err = advertiseAddr(c.Advertise.Serf, c.serfBind(), c.SerfPort); err != nil {
			return nil, fmt.Errorf("advertise.serf: %w", err)
		}
	}
	join := c.Server.Join
	key, err := c.Server.gossipKey() // config_tls.go
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(filepath.Dir(rs.serfSnapshot()), 0o700); err != nil {
		return nil, fmt.Errorf("create the serf directory: %w", err)
	}
	return &server.ClusterConfig{
		RPCListener:     rpcLn,
		RPCAdvertise:    rpcAdv,
		SerfBind:        serfBind,
		SerfAdvertise:   serfAdv,
		SerfSnapshot:    rs.serfSnapshot(),
		ClusterIDFile:   rs.clusterIDFile(),
		BootstrapExpect: c.Server.BootstrapExpect,
		StartJoin:       withDefaultPort(join.StartJoin, DefaultSerfPort),
		RetryJoin:       withDefaultPort(join.RetryJoin, DefaultSerfPort),
		RetryInterval:   join.RetryInterval,
		RetryMax:        join.RetryMax,
		Version:         Version,
		LANConfig:       true,
		TLS:             a.serverRPCTLS(), // config_tls.go
		GossipKey:       key,
	}, nil
}

// bootstrapsAlone reports whether the agent's server forms a cluster on
// its own: bootstrap_expect 1, or -dev. With 0 (unset, as in Nomad) a
// server bootstraps nothing: it waits to be joined to a cluster.
func (c *Config) bootstrapsAlone() bool {
	return c.DevMode || c.Server.BootstrapExpect == 1
}

// advertiseAddr returns the address to advertise for a listener bound to
// bind:port: adv ("host" takes the port, "host:port" is kept), else bind,
// else (bind is every interface) this host's first private IPv4 address.
func advertiseAddr(adv, bind string, port int) (string, error) {
	if adv != "" {
		if _, _, err := net.SplitHostPort(adv); err == nil {
			return adv, nil
		}
		return net.JoinHostPort(adv, strconv.Itoa(port)), nil
	}
	if !isUnspecified(bind) {
		return net.JoinHostPort(bind, strconv.Itoa(port)), nil
	}
	ip, err := privateIPv4()
	if err != nil {
		return "", err
	}
	return net.JoinHostPort(ip, strconv.Itoa(port)), nil
}

// isUnspecified reports whether host binds every interface.
func isUnspecified(host string) bool {
	if host == "" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsUnspecified()
}

// privateIPv4 returns this host's first private IPv4 address.
func privateIPv4() (string, error) {
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		return "", fmt.Errorf("list the host's addresses: %w", err)
	}
	for _, a := range addrs {
		if n, ok := a.(*net.IPNet); ok && n.IP.To4() != nil && n.IP.IsPrivate() {
			return n.IP.String(), nil
		}
	}
	return "", errors.New("bound to every interface, and this host has no private IPv4 address to advertise: set the advertise block")
}

// withDefaultPort adds port to the addresses that have none.
func withDefaultPort(addrs []string, port int) []string {
	var out []string
	for _, a := range addrs {
		a = strings.TrimSpace(a)
		if a == "" {
			continue
		}
		if _, _, err := net.SplitHostPort(a); err != nil {
			a = net.JoinHostPort(strings.Trim(a, "[]"), strconv.Itoa(port))
		}
		out = append(out, a)
	}
	return out
}
