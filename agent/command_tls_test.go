package agent

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/drover-io/drover/tlsutil"
)

// TestRunCommandTLSReloadOnHangup: a dev agent serving HTTPS says so in
// its banner; SIGHUP reloads its certificate (the next connection sees the
// new one) and does not stop it; SIGINT does.
func TestRunCommandTLSReloadOnHangup(t *testing.T) {
	dir := t.TempDir()
	caPEM, caKey, err := tlsutil.GenerateCA(tlsutil.CAOptions{})
	if err != nil {
		t.Fatal(err)
	}
	newPair := func() {
		c, k, err := tlsutil.GenerateCert(tlsutil.CertOptions{Kind: tlsutil.KindServer, CACertPEM: caPEM, CAKeyPEM: caKey})
		if err != nil {
			t.Fatal(err)
		}
		writeFile(t, filepath.Join(dir, "server.pem"), string(c))
		writeFile(t, filepath.Join(dir, "server-key.pem"), string(k))
	}
	writeFile(t, filepath.Join(dir, "ca.pem"), string(caPEM))
	newPair()
	cfgPath := filepath.Join(dir, "tls.hcl")
	writeFile(t, cfgPath, fmt.Sprintf("tls {\n  http = true\n  ca_file = %q\n  cert_file = %q\n  key_file = %q\n}\n",
		filepath.Join(dir, "ca.pem"), filepath.Join(dir, "server.pem"), filepath.Join(dir, "server-key.pem")))

	var stdout, stderr syncBuffer
	signals := make(chan os.Signal)
	started := make(chan *Agent, 1)
	done := make(chan int, 1)
	go func() {
		done <- runCommand([]string{"-dev", "-http-port", "0", "-config", cfgPath}, &stdout, &stderr, signals, started)
	}()
	var a *Agent
	select {
	case a = <-started:
	case code := <-done:
		t.Fatalf("agent exited with %d: %s", code, stderr.String())
	case <-time.After(60 * time.Second):
		t.Fatal("agent did not start")
	}
	if !strings.Contains(stdout.String(), "https://"+a.HTTPAddr()) {
		t.Errorf("the banner does not show the https address:\n%s", stdout.String())
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(caPEM)
	served := func() string {
		t.Helper()
		conn, err := tls.Dial("tcp", a.HTTPAddr(), &tls.Config{RootCAs: pool})
		if err != nil {
			t.Fatalf("HTTPS: %v", err)
		}
		defer conn.Close()
		return conn.ConnectionState().PeerCertificates[0].SerialNumber.String()
	}
	before := served()
	newPair()
	// signals is unbuffered: the second hangup is taken only once the
	// first one's reload is done.
	for range 2 {
		select {
		case signals <- syscall.SIGHUP:
		case code := <-done:
			t.Fatalf("SIGHUP stopped the agent (exit %d): %s", code, stderr.String())
		}
	}
	after := served()
	if after == before {
		t.Fatal("the same certificate is served after SIGHUP")
	}
	if !strings.Contains(stdout.String(), "reloading the TLS certificates") || !strings.Contains(stderr.String(), "TLS certificate reloaded") {
		t.Errorf("the reload is not reported:\n%s\n%s", stdout.String(), stderr.String())
	}
	signals <- os.Interrupt
	select {
	case code := <-done:
		if code != 0 {
			t.Errorf("exit code = %d; stderr %s", code, stderr.String())
		}
	case <-time.After(60 * time.Second):
		t.Fatal("agent did not stop after SIGINT")
	}
}
