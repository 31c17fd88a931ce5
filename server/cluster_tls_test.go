package server

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/drover-io/drover/rpcapi"
	"github.com/drover-io/drover/structs"
	"github.com/drover-io/drover/tlsutil"
)

// testTLS writes a CA and makes Configurators of its certificates.
type testTLS struct {
	dir          string
	caPEM, caKey []byte
}

func newTestTLS(t *testing.T) *testTLS {
	t.Helper()
	ca, key, err := tlsutil.GenerateCA(tlsutil.CAOptions{})
	if err != nil {
		t.Fatal(err)
	}
	tt := &testTLS{dir: t.TempDir(), caPEM: ca, caKey: key}
	if err := os.WriteFile(filepath.Join(tt.dir, "ca.pem"), ca, 0o600); err != nil {
		t.Fatal(err)
	}
	return tt
}

// configurator returns the Configurator of a new certificate of kind.
func (tt *testTLS) configurator(t *testing.T, kind tlsutil.Kind, name string) *tlsutil.Configurator {
	t.Helper()
	c, k, err := tlsutil.GenerateCert(tlsutil.CertOptions{Kind: kind, CACertPEM: tt.caPEM, CAKeyPEM: tt.caKey})
	if err != nil {
		t.Fatal(err)
	}
	cf, kf := filepath.Join(tt.dir, name+".pem"), filepath.Join(tt.dir, name+"-key.pem")
	for p, b := range map[string][]byte{cf: c, kf: k} {
		if err := os.WriteFile(p, b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	cfg, err := tlsutil.NewConfigurator(tlsutil.Config{EnableRPC: true, CAFile: filepath.Join(tt.dir, "ca.pem"), CertFile: cf, KeyFile: kf,
		Region: "global", VerifyServerHostname: true}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// rpcTLS is the server's RPCTLS of a Configurator, as the agent makes it.
func rpcTLS(c *tlsutil.Configurator) *RPCTLS {
	return &RPCTLS{Server: c.RPCServer(), Client: c.RPCClient(), RaftPeerName: tlsutil.ServerName("global")}
}

// TestClusterTLS: three servers whose RPC ports (raft and calls) are
// mutual TLS and whose gossip is encrypted form a cluster and forward
// writes to the leader; a server without the gossip key cannot join, a
// plain-text connection to the RPC port is closed, and a client's
// certificate opens no raft connection.
func TestClusterTLS(t *testing.T) {
	tt := newTestTLS(t)
	key := []byte("0123456789abcdef0123456789abcdef")
	servers := startCluster(t, func(i int, c *Config) {
		c.Cluster.TLS = rpcTLS(tt.configurator(t, tlsutil.KindServer, fmt.Sprintf("server%d", i)))
		c.Cluster.GossipKey = key
	})
	for _, s := range servers {
		waitNotified(t, s.leaderNotify, s.config.NodeName+" to have the three voters", func() (bool, string) {
			v := s.voters()
			return len(v) == 3, fmt.Sprint(v)
		})
	}
	f := followers(servers)[0]
	if _, err := rpcapi.JobRegister.Call(context.Background(), f, &structs.JobRegisterRequest{Job: testJob("web", 1, 100, 64)}); err != nil {
		t.Fatalf("register through a follower (forwarded over TLS): %v", err)
	}

	t.Run("gossip without the key", func(t *testing.T) {
		stranger := clusterServer(t, "stranger", newTestStores(), func(c *Config) {
			c.Cluster.BootstrapExpect = 0
			c.Cluster.TLS = rpcTLS(tt.configurator(t, tlsutil.KindServer, "stranger"))
		})
		if _, err := stranger.Join([]string{servers[0].SerfAddr()}); err == nil {
			t.Fatal("a server without the gossip key joined the pool")
		}
	})

	addr := servers[0].cluster.rpcServer.Addr()
	t.Run("plain text refused", func(t *testing.T) {
		conn, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		_ = conn.SetDeadline(time.Now().Add(30 * time.Second))
		if _, err := conn.Write([]byte("POST " + rpcapi.PathPrefix + "Job.Get HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n")); err != nil {
			t.Fatal(err)
		}
		// Closed (EOF, or a reset: the request was left unread).
		if n, err := conn.Read(make([]byte, 64)); err == nil {
			t.Fatalf("read %d bytes: want the connection closed", n)
		}
	})

	t.Run("client certificate opens no raft connection", func(t *testing.T) {
		client := tt.configurator(t, tlsutil.KindClient, "client")
		conn, err := tls.Dial("tcp", addr, client.RPCClient())
		if err != nil {
			t.Fatalf("a client's TLS connection to the RPC port: %v", err)
		}
		defer conn.Close()
		_ = conn.SetDeadline(time.Now().Add(30 * time.Second))
		if _, err := conn.Write([]byte{raftConnByte}); err != nil {
			t.Fatal(err)
		}
		if n, err := conn.Read(make([]byte, 64)); err == nil {
			t.Fatalf("read %d bytes: want the raft connection closed", n)
		}
	})
}
