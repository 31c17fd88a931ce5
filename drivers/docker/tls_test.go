package docker

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"io"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/drover-io/drover/plugins/drivers"
)

// testPKI is a CA with a server certificate for 127.0.0.1 and a client
// certificate, as PEM files in dir.
type testPKI struct {
	dir           string
	ca, cert, key string // client files for the plugin's tls block
	serverCert    tls.Certificate
	pool          *x509.CertPool
	otherCA       string // a CA that signed nothing here
}

func newTestPKI(t *testing.T) *testPKI {
	t.Helper()
	dir := t.TempDir()
	p := &testPKI{dir: dir, pool: x509.NewCertPool()}
	caKey, caCert, caPEM := makeCA(t, "drover test CA")
	p.pool.AddCert(caCert)
	p.ca = writePEM(t, dir, "ca.pem", caPEM)
	_, _, otherPEM := makeCA(t, "other CA")
	p.otherCA = writePEM(t, dir, "other-ca.pem", otherPEM)

	srvPEM, srvKeyPEM := makeLeaf(t, caKey, caCert, "127.0.0.1", x509.ExtKeyUsageServerAuth)
	var err error
	if p.serverCert, err = tls.X509KeyPair(srvPEM, srvKeyPEM); err != nil {
		t.Fatal(err)
	}
	cliPEM, cliKeyPEM := makeLeaf(t, caKey, caCert, "drover", x509.ExtKeyUsageClientAuth)
	p.cert = writePEM(t, dir, "cert.pem", cliPEM)
	p.key = writePEM(t, dir, "key.pem", cliKeyPEM)
	return p
}

func makeCA(t *testing.T, name string) (*ecdsa.PrivateKey, *x509.Certificate, []byte) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: name},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	return key, cert, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
}

func makeLeaf(t *testing.T, caKey *ecdsa.PrivateKey, ca *x509.Certificate, name string, usage x509.ExtKeyUsage) (certPEM, keyPEM []byte) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(time.Now().UnixNano()), Subject: pkix.Name{CommonName: name},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{usage},
	}
	if ip := net.ParseIP(name); ip != nil {
		tmpl.IPAddresses = []net.IP{ip}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	kb, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kb})
}

func writePEM(t *testing.T, dir, name string, b []byte) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// startDaemonProxy listens on loopback (TLS with client certificates when
// tlsConf is set) and relays each connection to the daemon's unix socket;
// it returns the tcp:// endpoint.
func startDaemonProxy(t *testing.T, tlsConf *tls.Config) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	if tlsConf != nil {
		l = tls.NewListener(l, tlsConf)
	}
	sock := strings.TrimPrefix(DefaultEndpoint, "unix://")
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		conns []net.Conn
	)
	track := func(c net.Conn) {
		mu.Lock()
		conns = append(conns, c)
		mu.Unlock()
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			in, err := l.Accept()
			if err != nil {
				return
			}
			out, err := net.Dial("unix", sock)
			if err != nil {
				in.Close()
				continue
			}
			track(in)
			track(out)
			wg.Add(2)
			go func() {
				defer wg.Done()
				_, _ = io.Copy(out, in)
				out.Close()
			}()
			go func() {
				defer wg.Done()
				_, _ = io.Copy(in, out)
				in.Close()
			}()
		}
	}()
	t.Cleanup(func() {
		l.Close()
		mu.Lock()
		for _, c := range conns {
			c.Close()
		}
		mu.Unlock()
		wg.Wait()
	})
	return "tcp://" + l.Addr().String()
}

// TestEndpointTCPAndTLS runs tasks through a tcp:// endpoint, plain and
// with TLS (client certificates both ways), and checks that bad TLS
// settings are refused.
func TestEndpointTCPAndTLS(t *testing.T) {
	requireDocker(t)
	pki := newTestPKI(t)
	plain := startDaemonProxy(t, nil)
	secure := startDaemonProxy(t, &tls.Config{
		Certificates: []tls.Certificate{pki.serverCert}, ClientCAs: pki.pool,
		ClientAuth: tls.RequireAndVerifyClientCert, MinVersion: tls.VersionTLS12,
	})

	for _, tc := range []struct {
		name   string
		plugin *Config
	}{
		{"plain tcp", &Config{Endpoint: plain}},
		{"tls", &Config{Endpoint: secure, TLS: TLSConfig{Cert: pki.cert, Key: pki.key, CA: pki.ca}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, tc.plugin)
			if fp := firstFingerprint(t, h.d); fp.Health != drivers.HealthStateHealthy {
				t.Fatalf("fingerprint = %+v", fp)
			}
			cfg := h.config(shell("echo over $0; exit 4"))
			h.start(cfg)
			if res := h.wait(cfg.ID); res.ExitCode != 4 {
				t.Fatalf("result = %+v", res)
			}
			if got := readFile(t, cfg.StdoutPath); got != "over sh\n" {
				t.Fatalf("stdout = %q", got)
			}
		})
	}

	for _, tc := range []struct {
		name   string
		plugin *Config
		want   string
	}{
		{"no client certificate", &Config{Endpoint: secure, TLS: TLSConfig{CA: pki.ca}}, "Docker daemon unreachable"},
		{"unknown CA", &Config{Endpoint: secure, TLS: TLSConfig{Cert: pki.cert, Key: pki.key, CA: pki.otherCA}}, "certificate signed by unknown authority"},
		{"plain to a TLS endpoint", &Config{Endpoint: secure}, "Docker daemon unreachable"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d, err := New(nil, tc.plugin)
			if err != nil {
				t.Fatal(err)
			}
			defer d.Shutdown()
			if fp := firstFingerprint(t, d); fp.Health == drivers.HealthStateHealthy || !strings.Contains(fp.HealthDescription, tc.want) {
				t.Fatalf("fingerprint = %+v, want unhealthy with %q", fp, tc.want)
			}
		})
	}

	t.Run("DOCKER_TLS_VERIFY and DOCKER_CERT_PATH", func(t *testing.T) {
		// Docker's environment, when the endpoint comes from DOCKER_HOST
		// (the PKI's files are named as Docker expects).
		t.Setenv("DOCKER_HOST", secure)
		t.Setenv("DOCKER_TLS_VERIFY", "1")
		t.Setenv("DOCKER_CERT_PATH", pki.dir)
		d, err := New(nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer d.Shutdown()
		if fp := firstFingerprint(t, d); fp.Health != drivers.HealthStateHealthy {
			t.Fatalf("fingerprint = %+v", fp)
		}
	})

	t.Run("bad files", func(t *testing.T) {
		for _, tc := range []struct {
			tls  TLSConfig
			want string
		}{
			{TLSConfig{Cert: filepath.Join(pki.dir, "none.pem"), Key: pki.key}, `config field "tls.cert": load the client certificate`},
			{TLSConfig{CA: pki.key}, `config field "tls.ca"`},
		} {
			if _, err := New(nil, &Config{Endpoint: secure, TLS: tc.tls}); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("New with tls %+v = %v, want %q", tc.tls, err, tc.want)
			}
		}
	})
}

// firstFingerprint returns the driver's first fingerprint.
func firstFingerprint(t *testing.T, d *Driver) *drivers.Fingerprint {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ch, err := d.Fingerprint(ctx)
	if err != nil {
		t.Fatal(err)
	}
	fp := <-ch
	cancel()
	for range ch {
	}
	return fp
}
