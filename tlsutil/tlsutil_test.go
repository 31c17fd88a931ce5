package tlsutil

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// certSet is a CA and certificates written in a temp dir.
type certSet struct {
	dir               string
	caPEM, caKey      []byte
	caFile, caKeyFile string
}

func newCertSet(t *testing.T) *certSet {
	t.Helper()
	dir := t.TempDir()
	caPEM, caKey, err := GenerateCA(CAOptions{})
	if err != nil {
		t.Fatal(err)
	}
	s := &certSet{dir: dir, caPEM: caPEM, caKey: caKey}
	s.caFile, s.caKeyFile = filepath.Join(dir, "nomad-agent-ca.pem"), filepath.Join(dir, "nomad-agent-ca-key.pem")
	write(t, s.caFile, caPEM)
	write(t, s.caKeyFile, caKey)
	return s
}

// cert makes a certificate of kind, written as prefix.pem and
// prefix-key.pem; it returns the two paths.
func (s *certSet) cert(t *testing.T, o CertOptions, prefix string) (string, string) {
	t.Helper()
	o.CACertPEM, o.CAKeyPEM = s.caPEM, s.caKey
	c, k, err := GenerateCert(o)
	if err != nil {
		t.Fatal(err)
	}
	cf, kf := filepath.Join(s.dir, prefix+".pem"), filepath.Join(s.dir, prefix+"-key.pem")
	write(t, cf, c)
	write(t, kf, k)
	return cf, kf
}

func write(t *testing.T, path string, b []byte) {
	t.Helper()
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
}

// configurator loads a Configurator of a kind's certificate of s.
func (s *certSet) configurator(t *testing.T, kind Kind, mod func(*Config), logger *slog.Logger) *Configurator {
	t.Helper()
	cf, kf := s.cert(t, CertOptions{Kind: kind}, string(kind)+"-"+strings.ReplaceAll(t.Name(), "/", "_"))
	cfg := Config{EnableHTTP: true, EnableRPC: true, CAFile: s.caFile, CertFile: cf, KeyFile: kf, Region: "global", VerifyServerHostname: true}
	if mod != nil {
		mod(&cfg)
	}
	c, err := NewConfigurator(cfg, logger)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// handshake runs one TLS connection between the two configs over
// loopback: the server answers one line. It returns the client's view
// and the errors of both sides.
func handshake(t *testing.T, serverCfg, clientCfg *tls.Config) (tls.ConnectionState, error, error) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	serrCh := make(chan error, 1)
	go func() {
		serrCh <- func() error {
			conn, err := ln.Accept()
			if err != nil {
				return err
			}
			defer conn.Close()
			tc := tls.Server(conn, serverCfg)
			_ = tc.SetDeadline(time.Now().Add(10 * time.Second))
			if err := tc.Handshake(); err != nil {
				return err
			}
			_, err = tc.Write([]byte("ok\n"))
			return err
		}()
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	conn, cerr := DialContext(&net.Dialer{}, clientCfg)(ctx, "tcp", ln.Addr().String())
	if cerr != nil {
		return tls.ConnectionState{}, <-serrCh, cerr
	}
	defer conn.Close()
	// Read the line: a TLS 1.3 client gets its session ticket (and a
	// refusal of its certificate) only when it reads.
	if _, cerr = bufio.NewReader(conn).ReadString('\n'); cerr != nil {
		return tls.ConnectionState{}, <-serrCh, cerr
	}
	return conn.(*tls.Conn).ConnectionState(), <-serrCh, nil
}

func TestRPCMutualTLS(t *testing.T) {
	set := newCertSet(t)
	other := newCertSet(t)
	var logs bytes.Buffer
	logger := slog.New(slog.NewTextHandler(&logs, nil))
	server := set.configurator(t, KindServer, nil, logger)

	for _, tc := range []struct {
		name    string
		client  func(t *testing.T) *tls.Config
		wantErr string // in the server's error and log; "" succeeds
	}{
		{"server calls server", func(t *testing.T) *tls.Config { return set.configurator(t, KindServer, nil, nil).RPCClient() }, ""},
		{"client calls server", func(t *testing.T) *tls.Config { return set.configurator(t, KindClient, nil, nil).RPCClient() }, ""},
		{"cli certificate refused on RPC", func(t *testing.T) *tls.Config { return set.configurator(t, KindCLI, nil, nil).RPCClient() },
			"does not name server.global.nomad or client.global.nomad"},
		{"other region refused", func(t *testing.T) *tls.Config {
			cf, kf := set.cert(t, CertOptions{Kind: KindClient, Region: "east"}, "east-client")
			c, err := NewConfigurator(Config{EnableRPC: true, CAFile: set.caFile, CertFile: cf, KeyFile: kf, Region: "global"}, nil)
			if err != nil {
				t.Fatal(err)
			}
			return c.RPCClient()
		}, "does not name server.global.nomad"},
		{"no certificate refused", func(t *testing.T) *tls.Config {
			cfg := set.configurator(t, KindClient, nil, nil).RPCClient()
			cfg.GetClientCertificate = nil
			return cfg
		}, "certificate is required"},
		{"other CA refused", func(t *testing.T) *tls.Config {
			c := other.configurator(t, KindClient, nil, nil).RPCClient()
			// Trust the server, to see the server refuse the client.
			c.VerifyConnection = nil
			return c
		}, "signed by an unknown CA"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			logs.Reset()
			_, serr, cerr := handshake(t, server.RPCServer(), tc.client(t))
			if tc.wantErr == "" {
				if serr != nil || cerr != nil {
					t.Fatalf("server error %v, client error %v", serr, cerr)
				}
				return
			}
			if serr == nil || !strings.Contains(serr.Error(), tc.wantErr) {
				t.Fatalf("server error %v, want %q", serr, tc.wantErr)
			}
			if cerr == nil {
				t.Fatal("the client did not see the refusal")
			}
			if !strings.Contains(logs.String(), "remote_addr=127.0.0.1:") || !strings.Contains(logs.String(), tc.wantErr) {
				t.Fatalf("the refusal is not logged with the caller's address: %s", logs.String())
			}
		})
	}
}

func TestClientChecksServer(t *testing.T) {
	set := newCertSet(t)
	other := newCertSet(t)
	for _, tc := range []struct {
		name    string
		server  *Configurator
		mod     func(*Config)
		wantErr string
	}{
		{"server certificate", set.configurator(t, KindServer, nil, nil), nil, ""},
		{"client certificate posing as server", set.configurator(t, KindClient, nil, nil), nil, "does not name server.global.nomad"},
		{"without verify_server_hostname any agent of the CA", set.configurator(t, KindClient, nil, nil),
			func(c *Config) { c.VerifyServerHostname = false }, ""},
		{"server of another CA", other.configurator(t, KindServer, nil, nil), nil, "signed by an unknown CA"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			client := set.configurator(t, KindClient, tc.mod, nil)
			srv := tc.server.RPCServer()
			if tc.server.cfg.CAFile != set.caFile {
				// The other CA's server would refuse our client first.
				srv = tc.server.HTTPServer()
			}
			_, _, cerr := handshake(t, srv, client.RPCClient())
			switch {
			case tc.wantErr == "" && cerr != nil:
				t.Fatalf("client error %v", cerr)
			case tc.wantErr != "" && (cerr == nil || !strings.Contains(cerr.Error(), tc.wantErr)):
				t.Fatalf("client error %v, want %q", cerr, tc.wantErr)
			}
		})
	}
}

func TestHTTPSClientCertificate(t *testing.T) {
	set := newCertSet(t)
	cli := set.configurator(t, KindCLI, nil, nil).HTTPClient()
	noCert := set.configurator(t, KindCLI, nil, nil).HTTPClient()
	noCert.GetClientCertificate = nil
	for _, tc := range []struct {
		name         string
		verifyClient bool
		client       *tls.Config
		wantErr      bool
	}{
		{"no client certificate needed", false, noCert, false},
		{"cli certificate accepted", true, cli, false},
		{"no client certificate refused", true, noCert, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := set.configurator(t, KindServer, func(c *Config) { c.VerifyHTTPSClient = tc.verifyClient }, nil)
			_, serr, cerr := handshake(t, srv.HTTPServer(), tc.client)
			if got := serr != nil || cerr != nil; got != tc.wantErr {
				t.Fatalf("server error %v, client error %v; want an error: %v", serr, cerr, tc.wantErr)
			}
		})
	}
}

func TestSessionResumption(t *testing.T) {
	set := newCertSet(t)
	server := set.configurator(t, KindServer, nil, nil)
	client := set.configurator(t, KindClient, nil, nil)
	// One listener, two connections: the second resumes the first's
	// session, client certificate included.
	cfg := client.RPCClient()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for range 2 {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			tc := tls.Server(conn, server.RPCServer())
			if tc.Handshake() == nil {
				_, _ = tc.Write([]byte("ok\n"))
			}
			_ = tc.Close()
		}
	}()
	defer wg.Wait()
	var resumed []bool
	for range 2 {
		conn, err := DialContext(&net.Dialer{}, cfg)(context.Background(), "tcp", ln.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		if _, err := bufio.NewReader(conn).ReadString('\n'); err != nil {
			t.Fatal(err)
		}
		resumed = append(resumed, conn.(*tls.Conn).ConnectionState().DidResume)
		_ = conn.Close()
	}
	if resumed[0] || !resumed[1] {
		t.Fatalf("resumed = %v, want [false true]", resumed)
	}
}

func TestReloadServesNewCertificate(t *testing.T) {
	set := newCertSet(t)
	cf, kf := set.cert(t, CertOptions{Kind: KindServer}, "server")
	srv, err := NewConfigurator(Config{EnableRPC: true, CAFile: set.caFile, CertFile: cf, KeyFile: kf, Region: "global"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	client := set.configurator(t, KindClient, nil, nil)
	serial := func() string {
		t.Helper()
		// A fresh client config: no session to resume with the old one.
		cs, serr, cerr := handshake(t, srv.RPCServer(), client.clientConfig(nil))
		if serr != nil || cerr != nil {
			t.Fatalf("server error %v, client error %v", serr, cerr)
		}
		return cs.PeerCertificates[0].SerialNumber.String()
	}
	before := serial()
	// Rotate the files in place, then reload.
	c, k, err := GenerateCert(CertOptions{Kind: KindServer, CACertPEM: set.caPEM, CAKeyPEM: set.caKey})
	if err != nil {
		t.Fatal(err)
	}
	write(t, cf, c)
	write(t, kf, k)
	if got := serial(); got != before {
		t.Fatalf("the new certificate is served before Reload")
	}
	if err := srv.Reload(); err != nil {
		t.Fatal(err)
	}
	block, _ := pem.Decode(c)
	want, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	if got := serial(); got != want.SerialNumber.String() {
		t.Fatalf("served serial %s after Reload, want the new %s", got, want.SerialNumber)
	}
	// A broken rotation keeps the former pair in force.
	write(t, kf, set.caKey)
	if err := srv.Reload(); err == nil || !strings.Contains(err.Error(), "do not match") {
		t.Fatalf("Reload of a mismatched pair: %v", err)
	}
	if got := serial(); got != want.SerialNumber.String() {
		t.Fatalf("a failed Reload changed the served certificate")
	}
}

func TestLoadErrors(t *testing.T) {
	set := newCertSet(t)
	other := newCertSet(t)
	good, goodKey := set.cert(t, CertOptions{Kind: KindServer}, "good")
	otherKeyCert, otherKey := set.cert(t, CertOptions{Kind: KindServer}, "other")
	_ = otherKeyCert
	expired, expiredKey := set.cert(t, CertOptions{Kind: KindServer, Now: time.Now().AddDate(0, 0, -10), Days: 1}, "expired")
	foreign, foreignKey := other.cert(t, CertOptions{Kind: KindServer}, "foreign")
	garbage := filepath.Join(set.dir, "garbage.pem")
	write(t, garbage, []byte("not a certificate"))
	for _, tc := range []struct {
		name      string
		cfg       Config
		wantError string
	}{
		{"mismatched key", Config{EnableRPC: true, CAFile: set.caFile, CertFile: good, KeyFile: otherKey}, "do not match"},
		{"expired", Config{EnableRPC: true, CAFile: set.caFile, CertFile: expired, KeyFile: expiredKey}, "expired on"},
		{"signed by another CA", Config{EnableRPC: true, CAFile: set.caFile, CertFile: foreign, KeyFile: foreignKey}, "is not signed by tls.ca_file"},
		{"CA file without certificate", Config{EnableRPC: true, CAFile: garbage, CertFile: good, KeyFile: goodKey}, "holds no PEM certificate"},
		{"missing CA file", Config{EnableRPC: true, CAFile: filepath.Join(set.dir, "nope.pem"), CertFile: good, KeyFile: goodKey}, "read tls.ca_file"},
		{"no files named", Config{EnableHTTP: true}, "tls.ca_file is required"},
		{"bad version", Config{MinVersion: "tls14"}, "tls.tls_min_version"},
		{"bad cipher", Config{CipherSuites: []string{"TLS_RSA_WITH_RC4_128_SHA", "TLS_NOPE"}}, "unknown or insecure suites"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := NewConfigurator(tc.cfg, nil)
			if err == nil || !strings.Contains(err.Error(), tc.wantError) {
				t.Fatalf("error %v, want %q", err, tc.wantError)
			}
		})
	}
}

func TestConfigVersionsAndCiphers(t *testing.T) {
	set := newCertSet(t)
	c := set.configurator(t, KindServer, func(c *Config) {
		c.MinVersion = "tls13"
		c.CipherSuites = []string{"TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256"}
	}, nil)
	for _, cfg := range []*tls.Config{c.RPCServer(), c.HTTPServer(), c.RPCClient(), c.HTTPClient()} {
		if cfg.MinVersion != tls.VersionTLS13 || len(cfg.CipherSuites) != 1 || cfg.CipherSuites[0] != tls.TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256 {
			t.Fatalf("config has min version %x, suites %v", cfg.MinVersion, cfg.CipherSuites)
		}
	}
	// A TLS 1.2-only caller cannot reach a tls13 agent.
	old := set.configurator(t, KindClient, nil, nil).RPCClient()
	old.MaxVersion = tls.VersionTLS12
	if _, _, cerr := handshake(t, c.RPCServer(), old); cerr == nil {
		t.Fatal("a TLS 1.2 client reached a tls_min_version = tls13 server")
	}
}

// TestVerifiedPeerExpires: a caller verified once is not trusted past its
// certificate's expiry, nor after a reload to another CA.
func TestVerifiedPeerExpires(t *testing.T) {
	set := newCertSet(t)
	var mu sync.Mutex
	now := time.Now()
	clock := func() time.Time {
		mu.Lock()
		defer mu.Unlock()
		return now
	}
	cf, kf := set.cert(t, CertOptions{Kind: KindServer}, "server")
	cfg := Config{EnableRPC: true, CAFile: set.caFile, CertFile: cf, KeyFile: kf, Region: "global"}
	srv, err := NewConfigurator(cfg, nil, WithClock(clock))
	if err != nil {
		t.Fatal(err)
	}
	ccf, ckf := set.cert(t, CertOptions{Kind: KindClient, Days: 1}, "client")
	client, err := NewConfigurator(Config{EnableRPC: true, CAFile: set.caFile, CertFile: ccf, KeyFile: ckf, Region: "global"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	for range 2 { // the second is answered from the cache
		if _, serr, cerr := handshake(t, srv.RPCServer(), client.RPCClient()); serr != nil || cerr != nil {
			t.Fatalf("server error %v, client error %v", serr, cerr)
		}
	}
	mu.Lock()
	now = now.Add(48 * time.Hour)
	mu.Unlock()
	if _, serr, _ := handshake(t, srv.RPCServer(), client.clientConfig(nil)); serr == nil || !strings.Contains(serr.Error(), "expired") {
		t.Fatalf("an expired caller was accepted from the cache: %v", serr)
	}
	mu.Lock()
	now = time.Now()
	mu.Unlock()
	// Another CA in the same files: the cached verdict does not carry over.
	other := newCertSet(t)
	sc, sk, err := GenerateCert(CertOptions{Kind: KindServer, CACertPEM: other.caPEM, CAKeyPEM: other.caKey})
	if err != nil {
		t.Fatal(err)
	}
	write(t, set.caFile, other.caPEM)
	write(t, cf, sc)
	write(t, kf, sk)
	if err := srv.Reload(); err != nil {
		t.Fatal(err)
	}
	cc := client.clientConfig(nil)
	cc.VerifyConnection = nil // trust the new server, to see it refuse the caller
	if _, serr, _ := handshake(t, srv.RPCServer(), cc); serr == nil || !strings.Contains(serr.Error(), "unknown CA") {
		t.Fatalf("a caller of the former CA was accepted after the reload: %v", serr)
	}
}
