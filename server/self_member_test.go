package server

import (
	"context"
	"net"
	"strconv"
	"testing"

	"github.com/drover-io/drover/structs"
	"github.com/drover-io/drover/version"
)

// TestSelfMemberNamesItsLeaderAddress: a server without gossip (-dev)
// lists itself at the RPC address its agent reports as the leader's
// (/v1/status/leader), with the tags Nomad's `server members` reads (port,
// build), so that the CLI marks it the leader and shows its build.
func TestSelfMemberNamesItsLeaderAddress(t *testing.T) {
	s := newTestServer(t, func(c *Config) { c.SelfRPCAddr = "127.0.0.1:14647" })
	mem, err := s.ServerMembers(context.Background(), &structs.ServerMembersRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if len(mem.Members) != 1 {
		t.Fatalf("members = %d, want itself", len(mem.Members))
	}
	m := mem.Members[0]
	host, port, err := net.SplitHostPort(s.config.SelfRPCAddr)
	if err != nil {
		t.Fatal(err)
	}
	if m.Addr != host || strconv.Itoa(int(m.Port)) != port || m.Tags["port"] != port {
		t.Errorf("member %s port %d tag port %q; want %s", m.Addr, m.Port, m.Tags["port"], s.config.SelfRPCAddr)
	}
	if m.Tags["build"] != version.Version {
		t.Errorf("build tag = %q, want %q", m.Tags["build"], version.Version)
	}
}
