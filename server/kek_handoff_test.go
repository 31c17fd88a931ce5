package server

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/drover-io/drover/rpcapi"
	"github.com/drover-io/drover/server/keyring"
	"github.com/drover-io/drover/structs"
	"github.com/drover-io/drover/tlsutil"
)

// testGossipKey is the servers' gossip key in these tests.
var testGossipKey = []byte("0123456789abcdef0123456789abcdef")

// startLoneServer starts a server that bootstraps a cluster of one, which
// others join later, with no KEK given (a provisional one, as an agent
// without keyring.kek).
func startLoneServer(t *testing.T, mutate func(*Config)) *Server {
	t.Helper()
	s := clusterServer(t, "s1", newTestStores(), func(c *Config) {
		c.Cluster.BootstrapExpect = 1
		if mutate != nil {
			mutate(c)
		}
	})
	waitLeader(t, []*Server{s})
	return s
}

// joinServer starts a server named name that joins first's gossip pool,
// with no KEK given.
func joinServer(t *testing.T, name string, first *Server, mutate func(*Config)) *Server {
	t.Helper()
	return clusterServer(t, name, newTestStores(), func(c *Config) {
		c.Cluster.BootstrapExpect = 0
		c.Cluster.StartJoin = []string{first.SerfAddr()}
		if mutate != nil {
			mutate(c)
		}
	})
}

// TestKEKHandoffJoiningServer: servers that join without the KEK receive
// it from a peer (authenticated by the gossip key, with ACLs on or off,
// or by their TLS server certificates), decrypt variables written before
// they joined, and one of them, once leader, serves them and rotates.
func TestKEKHandoffJoiningServer(t *testing.T) {
	tt := newTestTLS(t)
	for _, tc := range []struct {
		name   string
		mutate func(name string) func(*Config)
	}{
		{"gossip key", func(string) func(*Config) {
			return func(c *Config) { c.Cluster.GossipKey = testGossipKey }
		}},
		{"gossip key and ACLs", func(string) func(*Config) {
			return func(c *Config) { c.Cluster.GossipKey = testGossipKey; c.ACLEnabled = true }
		}},
		{"TLS", func(name string) func(*Config) {
			return func(c *Config) { c.Cluster.TLS = rpcTLS(tt.configurator(t, tlsutil.KindServer, name)) }
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			first := startLoneServer(t, tc.mutate("s1"))
			if first.keyring.Provisional() {
				t.Fatal("the first leader's KEK is still provisional after it made the first root key")
			}
			w := clusterVarApply(t, first, structs.VarOpSet, "app/db", nil, map[string]string{"password": "s3cret"})

			servers := []*Server{first, joinServer(t, "s2", first, tc.mutate("s2")), joinServer(t, "s3", first, tc.mutate("s3"))}
			for _, s := range servers[1:] {
				waitNotified(t, s.indexNotify, s.config.NodeName+" to receive the KEK", func() (bool, string) {
					return !s.keyring.Provisional() && s.keyring.KEKID() == first.keyring.KEKID(),
						fmt.Sprintf("KEK %s (provisional %v), the cluster's %s", s.keyring.KEKID(), s.keyring.Provisional(), first.keyring.KEKID())
				})
				r, err := staleVarGet(s, "app/db", w.Index)
				if err != nil || r.Data == nil || r.Data.Items["password"] != "s3cret" {
					t.Fatalf("%s's own read of a variable written before it joined: %+v, %v", s.config.NodeName, r, err)
				}
			}
			for _, s := range servers {
				waitNotified(t, s.leaderNotify, s.config.NodeName+" to have the three voters", func() (bool, string) {
					v := s.voters()
					return len(v) == 3, fmt.Sprint(v)
				})
			}
			if err := first.Shutdown(); err != nil {
				t.Fatal(err)
			}
			leader := waitLeader(t, servers[1:])
			r, err := rpcapi.VarGet.Call(context.Background(), leader, &structs.VariablesReadRequest{Path: "app/db"})
			if err != nil || r.Data == nil || r.Data.Items["password"] != "s3cret" {
				t.Fatalf("read from the new leader %s: %+v, %v", leader.config.NodeName, r, err)
			}
			if _, err := rpcapi.KeyringRotate.Call(context.Background(), leader, &structs.KeyringRotateRequest{}); err != nil {
				t.Fatalf("rotate on the new leader: %v", err)
			}
		})
	}
}

// kekAsk calls s's KEKHandoff over the network through hc (nil: s's own
// transport) with a request proved by secret; it returns the ask (to open
// the answer), the answer and the error.
func kekAsk(t *testing.T, s *Server, hc *http.Client, secret []byte) (*keyring.HandoffAsk, *structs.KEKHandoffResponse, error) {
	t.Helper()
	ask, err := keyring.NewHandoffAsk(s.keyring.KEKID(), secret)
	if err != nil {
		t.Fatal(err)
	}
	wire := s.cluster.wire
	if hc != nil {
		wire = rpcapi.NewTransport(hc)
	}
	ctx, cancel := context.WithTimeout(context.Background(), clusterWait)
	defer cancel()
	resp, err := rpcapi.KEKHandoff.Call(ctx, serverConn{wire: wire, addr: s.RPCAddr()}, ask.Request())
	return ask, resp, err
}

// TestKEKHandoffRefused: the KEK goes only to a server: a caller with the
// wrong gossip key, or with a client's certificate, is refused; without
// TLS or a gossip key nothing is sent, and the answer says what to do; a
// changed answer does not open.
func TestKEKHandoffRefused(t *testing.T) {
	t.Run("gossip key", func(t *testing.T) {
		s := startLoneServer(t, func(c *Config) { c.Cluster.GossipKey = testGossipKey })
		_, _, err := kekAsk(t, s, nil, []byte("another-gossip-key-0123456789abc"))
		if structs.KindOf(err) != structs.KindPermission || !strings.Contains(err.Error(), "gossip key") {
			t.Fatalf("a caller with the wrong gossip key: %v, want permission denied", err)
		}
		if _, _, err := kekAsk(t, s, nil, nil); structs.KindOf(err) != structs.KindPermission {
			t.Fatalf("a caller without proof: %v, want permission denied", err)
		}
		ask, resp, err := kekAsk(t, s, nil, testGossipKey)
		if err != nil {
			t.Fatalf("a caller with the gossip key: %v", err)
		}
		if k, err := ask.Open(resp); err != nil || k.ID() != s.keyring.KEKID() {
			t.Fatalf("open the answer: %v, %v", k, err)
		}
		resp.Sealed[0] ^= 1
		if k, err := ask.Open(resp); err == nil {
			t.Fatalf("a changed answer opened: KEK %s", k.ID())
		}
	})

	t.Run("no shared secret", func(t *testing.T) {
		s := startLoneServer(t, nil)
		_, _, err := kekAsk(t, s, nil, nil)
		if structs.KindOf(err) != structs.KindPermission || !strings.Contains(err.Error(), "copy keyring.kek") {
			t.Fatalf("a hand-off without TLS or a gossip key: %v, want permission denied saying to copy keyring.kek", err)
		}
	})

	t.Run("TLS", func(t *testing.T) {
		tt := newTestTLS(t)
		s := startLoneServer(t, func(c *Config) {
			c.Cluster.TLS = rpcTLS(tt.configurator(t, tlsutil.KindServer, "server"))
		})
		dialer := &net.Dialer{Timeout: 5 * time.Second}
		client := tt.configurator(t, tlsutil.KindClient, "client")
		hc := &http.Client{Transport: &http.Transport{DialContext: tlsutil.DialContext(dialer, client.RPCClient())}}
		t.Cleanup(hc.CloseIdleConnections)
		_, _, err := kekAsk(t, s, hc, nil)
		if structs.KindOf(err) != structs.KindPermission || !strings.Contains(err.Error(), "server.global.nomad") {
			t.Fatalf("a caller with a client's certificate: %v, want permission denied", err)
		}
		other := tt.configurator(t, tlsutil.KindServer, "other")
		hs := &http.Client{Transport: &http.Transport{DialContext: tlsutil.DialContext(dialer, other.RPCClient())}}
		t.Cleanup(hs.CloseIdleConnections)
		ask, resp, err := kekAsk(t, s, hs, nil)
		if err != nil {
			t.Fatalf("a caller with a server's certificate: %v", err)
		}
		if k, err := ask.Open(resp); err != nil || k.ID() != s.keyring.KEKID() {
			t.Fatalf("open the answer: %v, %v", k, err)
		}
	})
}
