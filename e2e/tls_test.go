package e2e

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	nomad "github.com/hashicorp/nomad/api"

	"github.com/drover-io/drover/api"
	"github.com/drover-io/drover/rpcapi"
)

// tlsWait bounds one wait of the TLS tests.
const tlsWait = 2 * time.Minute

// droverIn runs the drover CLI in dir with env added and returns its
// result.
func droverIn(t *testing.T, dir string, env []string, args ...string) cliResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, droverBin, args...)
	cmd.Dir = dir
	cmd.Env = append(append(os.Environ(), "DROVER_ADDR=", "NOMAD_ADDR=", "NOMAD_CACERT=", "NOMAD_CLIENT_CERT=", "NOMAD_CLIENT_KEY="), env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("run drover %v: %v", args, err)
	}
	return cliResult{code, stdout.String(), stderr.String()}
}

// makeCerts makes a CA and a server, a client and a CLI certificate in a
// new directory with the drover CLI, and returns the directory.
func makeCerts(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	for _, args := range [][]string{{"tls", "ca", "create"}, {"tls", "cert", "create", "-server"},
		{"tls", "cert", "create", "-client"}, {"tls", "cert", "create", "-cli"}} {
		if r := droverIn(t, dir, nil, args...); r.code != 0 {
			t.Fatalf("drover %v: %s", args, r)
		}
	}
	return dir
}

// enableTLS adds a tls block with the certificate named base (in dir) to
// the agent's config and makes its address https.
func enableTLS(t *testing.T, a *persistentAgent, dir, base string) {
	t.Helper()
	block := fmt.Sprintf(`
tls {
  http = true
  rpc  = true
  ca_file   = %q
  cert_file = %q
  key_file  = %q
  verify_server_hostname = true
  verify_https_client    = true
}
`, filepath.Join(dir, "nomad-agent-ca.pem"), filepath.Join(dir, base+".pem"), filepath.Join(dir, base+"-key.pem"))
	f, err := os.OpenFile(a.configPath, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString(block); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	a.addr = "https://127.0.0.1:" + strconv.Itoa(a.httpPort)
}

// certEnv is the CLI's environment for the agent at addr with the CA and
// CLI certificate of dir.
func certEnv(addr, dir string) []string {
	return []string{"NOMAD_ADDR=" + addr, "NOMAD_CACERT=" + filepath.Join(dir, "nomad-agent-ca.pem"),
		"NOMAD_CLIENT_CERT=" + filepath.Join(dir, "global-cli-nomad.pem"), "NOMAD_CLIENT_KEY=" + filepath.Join(dir, "global-cli-nomad-key.pem")}
}

// tlsClient is drover's API client for the agent at addr with the CLI
// certificate of dir.
func tlsClient(t *testing.T, addr, dir string) *api.Client {
	t.Helper()
	c, err := api.NewClient(&api.Config{Address: addr, TLSConfig: &api.TLSConfig{
		CACert:     filepath.Join(dir, "nomad-agent-ca.pem"),
		ClientCert: filepath.Join(dir, "global-cli-nomad.pem"), ClientKey: filepath.Join(dir, "global-cli-nomad-key.pem"),
	}})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// caPool reads dir's CA.
func caPool(t *testing.T, dir string) *x509.CertPool {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "nomad-agent-ca.pem"))
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(b)
	return pool
}

// refusedRead writes to conn and reports whether the peer closed it
// without an answer.
func refusedRead(t *testing.T, conn net.Conn) bool {
	t.Helper()
	_ = conn.SetDeadline(time.Now().Add(tlsWait))
	if _, err := conn.Write([]byte("POST " + rpcapi.PathPrefix + "Status.Leader HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n")); err != nil {
		return true
	}
	n, err := conn.Read(make([]byte, 512))
	return n == 0 && err != nil
}

// TestTLSCluster: a server agent and a client-only agent with HTTPS and
// mutual TLS on the RPC port, made with `drover tls` in a minute: the
// client registers and runs a task over mTLS; the CLI (NOMAD_CACERT and
// the client certificate variables) and Nomad's Go API client reach the
// HTTPS API, and nothing reaches it without a client certificate; the RPC
// port refuses plain text, callers without a certificate and certificates
// of another CA, each logged with the caller's address; a client agent
// with another CA's certificate cannot join; SIGHUP serves a rotated
// certificate.
func TestTLSCluster(t *testing.T) {
	t.Parallel()
	requirePersistentAgent(t)
	dir := makeCerts(t)
	srv := newPersistentAgent(t, "tls-server", roleServer)
	enableTLS(t, srv, dir, "global-server-nomad")
	srv.start(t)
	c := tlsClient(t, srv.addr, dir)
	waitFor(t, tlsWait, "the TLS server to know its leader", func() (bool, string) {
		srv.checkAlive(t)
		leader, err := c.Status().Leader()
		if err != nil {
			return false, err.Error()
		}
		return leader != "", "no leader yet"
	})
	cl := newPersistentAgent(t, "tls-client", roleClient, srv.rpcAddr())
	enableTLS(t, cl, dir, "global-client-nomad")
	cl.start(t)
	cl.waitNodeReady(t, c, cl.name, tlsWait)

	t.Run("task runs on the mTLS client", func(t *testing.T) {
		job := &api.Job{ID: api.String("tls-job"), Name: api.String("tls-job"), Type: api.String("batch"), Datacenters: []string{"dc1"},
			TaskGroups: []*api.TaskGroup{{Name: api.String("g"), Count: api.Int(1), Tasks: []*api.Task{{
				Name: "t", Driver: "raw_exec", Config: map[string]any{"command": "/bin/true"},
			}}}}}
		if _, _, err := c.Jobs().Register(job, nil); err != nil {
			t.Fatal(err)
		}
		waitFor(t, tlsWait, "the allocation to complete on tls-client", func() (bool, string) {
			allocs, _, err := c.Jobs().Allocations("tls-job", false, nil)
			if err != nil || len(allocs) == 0 {
				return false, fmt.Sprint(len(allocs), err)
			}
			return allocs[0].ClientStatus == "complete", allocs[0].ClientStatus
		})
		// The server agent forwards a client request to tls-client's HTTPS
		// API, showing its own certificate.
		allocs, _, err := c.Jobs().Allocations("tls-job", false, nil)
		if err != nil {
			t.Fatal(err)
		}
		r := droverIn(t, t.TempDir(), certEnv(srv.addr, dir), "alloc", "fs", allocs[0].ID)
		if r.code != 0 || !strings.Contains(r.stdout, "alloc/") {
			t.Fatalf("alloc fs through the server (forwarded over HTTPS): %s", r)
		}
	})

	t.Run("CLI with NOMAD_CACERT and a client certificate", func(t *testing.T) {
		r := droverIn(t, t.TempDir(), certEnv(srv.addr, dir), "node", "status")
		if r.code != 0 || !strings.Contains(r.stdout, "tls-client") || !strings.Contains(r.stdout, "ready") {
			t.Fatalf("node status over HTTPS: %s", r)
		}
		env := []string{"NOMAD_ADDR=" + srv.addr}
		flags := []string{"node", "status", "-ca-cert", filepath.Join(dir, "nomad-agent-ca.pem"),
			"-client-cert", filepath.Join(dir, "global-cli-nomad.pem"), "-client-key", filepath.Join(dir, "global-cli-nomad-key.pem")}
		if r := droverIn(t, t.TempDir(), env, flags...); r.code != 0 {
			t.Fatalf("node status with the TLS flags: %s", r)
		}
		noCert := []string{"NOMAD_ADDR=" + srv.addr, "NOMAD_CACERT=" + filepath.Join(dir, "nomad-agent-ca.pem")}
		if r := droverIn(t, t.TempDir(), noCert, "node", "status"); r.code == 0 {
			t.Fatalf("node status without a client certificate succeeded: %s", r)
		}
		if r := droverIn(t, t.TempDir(), []string{"NOMAD_ADDR=" + srv.addr}, "node", "status"); r.code == 0 || !strings.Contains(r.stderr, "certificate") {
			t.Fatalf("node status without the CA: %s", r)
		}
	})

	t.Run("Nomad API client", func(t *testing.T) {
		nc, err := nomad.NewClient(&nomad.Config{Address: srv.addr, TLSConfig: &nomad.TLSConfig{
			CACert:     filepath.Join(dir, "nomad-agent-ca.pem"),
			ClientCert: filepath.Join(dir, "global-cli-nomad.pem"), ClientKey: filepath.Join(dir, "global-cli-nomad-key.pem"),
		}})
		if err != nil {
			t.Fatal(err)
		}
		nodes, _, err := nc.Nodes().List(nil)
		if err != nil || len(nodes) != 1 || nodes[0].Name != "tls-client" {
			t.Fatalf("nodes = %+v, %v", nodes, err)
		}
	})

	t.Run("RPC port refuses", func(t *testing.T) {
		other := makeCerts(t)
		foreign, err := tls.LoadX509KeyPair(filepath.Join(other, "global-client-nomad.pem"), filepath.Join(other, "global-client-nomad-key.pem"))
		if err != nil {
			t.Fatal(err)
		}
		for _, tc := range []struct {
			name string
			dial func() (net.Conn, error)
			log  string
		}{
			{"plain text", func() (net.Conn, error) { return net.Dial("tcp", srv.rpcAddr()) }, "plain-text connection refused"},
			{"no client certificate", func() (net.Conn, error) {
				return tls.Dial("tcp", srv.rpcAddr(), &tls.Config{RootCAs: caPool(t, dir), ServerName: "server.global.nomad"})
			}, "certificate is required"},
			{"another CA's certificate", func() (net.Conn, error) {
				return tls.Dial("tcp", srv.rpcAddr(), &tls.Config{RootCAs: caPool(t, dir), ServerName: "server.global.nomad",
					Certificates: []tls.Certificate{foreign}})
			}, "signed by an unknown CA"},
		} {
			t.Run(tc.name, func(t *testing.T) {
				conn, err := tc.dial()
				if err != nil {
					return // refused at the handshake
				}
				local := conn.LocalAddr().String()
				refused := refusedRead(t, conn)
				_ = conn.Close()
				if !refused {
					t.Fatal("the RPC port answered")
				}
				waitFor(t, tlsWait, "the refusal in the server's log with the caller's address", func() (bool, string) {
					for _, line := range strings.Split(srv.sinceLastStart(), "\n") {
						if strings.Contains(line, tc.log) && strings.Contains(line, "remote_addr="+local) {
							return true, ""
						}
					}
					return false, "no line with " + tc.log + " and remote_addr=" + local
				})
			})
		}
	})

	t.Run("client of another CA cannot join", func(t *testing.T) {
		other := makeCerts(t)
		stranger := newPersistentAgent(t, "tls-stranger", roleClient, srv.rpcAddr())
		enableTLS(t, stranger, other, "global-client-nomad")
		stranger.start(t)
		waitFor(t, tlsWait, "the stranger to report the server's unknown CA", func() (bool, string) {
			stranger.checkAlive(t)
			return strings.Contains(stranger.sinceLastStart(), "signed by an unknown CA"), "not yet"
		})
		sc := tlsClient(t, stranger.addr, other)
		waitFor(t, tlsWait, "the stranger to serve its HTTP API all the same", func() (bool, string) {
			stranger.checkAlive(t)
			_, err := sc.Agent().Self()
			return err == nil, fmt.Sprint(err)
		})
		nodes, _, err := c.Nodes().List(nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, n := range nodes {
			if n.Name == "tls-stranger" {
				t.Fatalf("a client of another CA registered: %+v", n)
			}
		}
	})

	t.Run("SIGHUP serves a rotated certificate", func(t *testing.T) {
		fresh := t.TempDir()
		r := droverIn(t, fresh, nil, "tls", "cert", "create", "-server",
			"-ca", filepath.Join(dir, "nomad-agent-ca.pem"), "-key", filepath.Join(dir, "nomad-agent-ca-key.pem"))
		if r.code != 0 {
			t.Fatalf("cert create: %s", r)
		}
		for _, f := range []string{"global-server-nomad.pem", "global-server-nomad-key.pem"} {
			b, err := os.ReadFile(filepath.Join(fresh, f))
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, f), b, 0o600); err != nil {
				t.Fatal(err)
			}
		}
		b, _ := os.ReadFile(filepath.Join(fresh, "global-server-nomad.pem"))
		block, _ := pem.Decode(b)
		want, err := x509.ParseCertificate(block.Bytes)
		if err != nil {
			t.Fatal(err)
		}
		if err := syscall.Kill(srv.cmd.Process.Pid, syscall.SIGHUP); err != nil {
			t.Fatal(err)
		}
		waitFor(t, tlsWait, "the server to reload its certificate", func() (bool, string) {
			srv.checkAlive(t)
			return strings.Contains(srv.sinceLastStart(), "TLS certificate reloaded"), "not yet"
		})
		cli, err := tls.LoadX509KeyPair(filepath.Join(dir, "global-cli-nomad.pem"), filepath.Join(dir, "global-cli-nomad-key.pem"))
		if err != nil {
			t.Fatal(err)
		}
		conn, err := tls.Dial("tcp", strings.TrimPrefix(srv.addr, "https://"), &tls.Config{RootCAs: caPool(t, dir), Certificates: []tls.Certificate{cli}})
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		if got := conn.ConnectionState().PeerCertificates[0].SerialNumber; got.Cmp(want.SerialNumber) != 0 {
			t.Fatalf("served serial %s after SIGHUP, want the rotated %s", got, want.SerialNumber)
		}
		// The agent still serves.
		if _, err := c.Agent().Self(); err != nil {
			t.Fatalf("the API after the reload: %v", err)
		}
	})
}

// rpcTLSBlock is a tls block with mutual TLS on the RPC port only (the
// HTTP API stays plain, for the cluster harness) and a gossip key.
func rpcTLSBlock(dir, base, gossipKey string) string {
	return fmt.Sprintf(`
server {
  encrypt = %q
}

tls {
  rpc       = true
  ca_file   = %q
  cert_file = %q
  key_file  = %q
  verify_server_hostname = true
}
`, gossipKey, filepath.Join(dir, "nomad-agent-ca.pem"), filepath.Join(dir, base+".pem"), filepath.Join(dir, base+"-key.pem"))
}

// TestTLSServerCluster: three servers whose raft, forwarding and client
// RPCs are mutual TLS and whose gossip is encrypted bootstrap a cluster;
// a write sent to a follower is forwarded to the leader; a client agent
// with a client certificate registers.
func TestTLSServerCluster(t *testing.T) {
	t.Parallel()
	requirePersistentAgent(t)
	dir := makeCerts(t)
	const gossipKey = "ZBjKi3lb0dyJ8Rc0Q6sCP/yXxoN+Pp6rWL5jFZbYeYM="
	ports := newPortSet()
	var servers []*clusterServer
	for i := range 3 {
		idx := i
		s := newClusterServer(t, ports, fmt.Sprintf("t%d", i+1), 3, func() []string {
			var out []string
			for j, o := range servers {
				if j != idx {
					out = append(out, o.serfAddr())
				}
			}
			return out
		})
		s.extra = rpcTLSBlock(dir, "global-server-nomad", gossipKey)
		servers = append(servers, s)
	}
	for _, s := range servers {
		s.writeConfig(t) // now that every server's port is known
		s.start(t)
	}
	tc := &testCluster{ports: ports, servers: servers}
	leader := tc.waitLeader(t, servers, "")
	for _, s := range servers {
		waitFor(t, clusterWait, s.name+" to see three voters", func() (bool, string) {
			v := voters(t, s)
			return len(v) == 3, fmt.Sprint(v)
		})
	}
	for _, s := range servers {
		if s == leader {
			continue
		}
		if err := registerJob(s.client(t), "forwarded-"+s.name); err != nil {
			t.Fatalf("register through follower %s (forwarded over TLS): %v", s.name, err)
		}
	}
	cl := newPersistentAgent(t, "tls-c1", roleClient, servers[0].rpcAddr())
	f, err := os.OpenFile(cl.configPath, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	_, err = f.WriteString(fmt.Sprintf(`
tls {
  rpc       = true
  ca_file   = %q
  cert_file = %q
  key_file  = %q
  verify_server_hostname = true
}
`, filepath.Join(dir, "nomad-agent-ca.pem"), filepath.Join(dir, "global-client-nomad.pem"), filepath.Join(dir, "global-client-nomad-key.pem")))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		t.Fatal(err)
	}
	cl.start(t)
	cl.waitNodeReady(t, leader.client(t), cl.name, clusterWait)
	for _, s := range servers {
		if out := s.sinceLastStart(); strings.Contains(out, "TLS connection refused") || strings.Contains(out, "plain-text connection refused") {
			t.Errorf("server %s refused an agent of its own cluster:\n%s", s.name, out)
		}
	}
}
