package command

import (
	"bytes"
	"crypto/x509"
	"encoding/pem"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/drover-io/drover/tlsutil"
)

// runWithEnv runs the CLI with env as its environment.
func runWithEnv(t *testing.T, env map[string]string, args ...string) result {
	t.Helper()
	var stdout, stderr bytes.Buffer
	d := deps{
		runAgent: func([]string, io.Writer, io.Writer) int { t.Error("agent run unexpectedly"); return 1 },
		now:      func() time.Time { return fixedNow },
		getenv:   func(k string) string { return env[k] },
		readFile: os.ReadFile,
	}
	code := run(args, newMeta(&stdout, &stderr, d))
	return result{code, stdout.String(), stderr.String()}
}

func readCert(t *testing.T, path string) *x509.Certificate {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	block, _ := pem.Decode(b)
	if block == nil {
		t.Fatalf("%s holds no PEM", path)
	}
	c, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestTLSCreateCommands: `tls ca create` and `tls cert create` write
// Nomad's file names with the roles' names, never overwrite, and refuse
// wrong flags.
func TestTLSCreateCommands(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	if r := runWithEnv(t, nil, "tls", "ca", "create"); r.code != 0 || !strings.Contains(r.stdout, "nomad-agent-ca.pem") {
		t.Fatalf("ca create: %+v", r)
	}
	ca := readCert(t, "nomad-agent-ca.pem")
	if !ca.IsCA {
		t.Fatal("the CA certificate is not a CA")
	}
	if st, err := os.Stat("nomad-agent-ca-key.pem"); err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("CA key file: %v, %v", st, err)
	}
	for _, tc := range []struct {
		args []string
		file string
		dns  []string
	}{
		{[]string{"-server"}, "global-server-nomad.pem", []string{"server.global.nomad", "localhost"}},
		{[]string{"-client", "-region", "east", "-additional-dnsname", "node1.example", "-additional-ipaddress", "10.0.0.9"},
			"east-client-nomad.pem", []string{"client.east.nomad", "localhost", "node1.example"}},
		{[]string{"-cli"}, "global-cli-nomad.pem", []string{"cli.global.nomad", "localhost"}},
	} {
		r := runWithEnv(t, nil, append([]string{"tls", "cert", "create"}, tc.args...)...)
		if r.code != 0 {
			t.Fatalf("cert create %v: %+v", tc.args, r)
		}
		c := readCert(t, tc.file)
		if !slices.Equal(c.DNSNames, tc.dns) {
			t.Errorf("%s: DNS names %v, want %v", tc.file, c.DNSNames, tc.dns)
		}
		if err := c.CheckSignatureFrom(ca); err != nil {
			t.Errorf("%s is not signed by the CA: %v", tc.file, err)
		}
		if _, err := os.Stat(strings.TrimSuffix(tc.file, ".pem") + "-key.pem"); err != nil {
			t.Errorf("no key of %s: %v", tc.file, err)
		}
	}
	before, _ := os.ReadFile("global-server-nomad.pem")
	for _, tc := range []struct {
		args    []string
		wantErr string
	}{
		{[]string{"tls", "ca", "create"}, "already exists"},
		{[]string{"tls", "cert", "create", "-server"}, "already exists"},
		{[]string{"tls", "cert", "create"}, "exactly one of -server, -client or -cli"},
		{[]string{"tls", "cert", "create", "-server", "-cli"}, "exactly one of"},
		{[]string{"tls", "cert", "create", "-cli", "-additional-ipaddress", "nope"}, "is not an IP address"},
		{[]string{"tls", "cert", "create", "-client", "-ca", "missing.pem"}, "tls ca create"},
	} {
		r := runWithEnv(t, nil, tc.args...)
		if r.code == 0 || !strings.Contains(r.stderr, tc.wantErr) {
			t.Errorf("%v: exit %d, stderr %q; want %q", tc.args, r.code, r.stderr, tc.wantErr)
		}
	}
	if after, _ := os.ReadFile("global-server-nomad.pem"); !bytes.Equal(before, after) {
		t.Error("a refused create changed an existing certificate")
	}
}

// TestCLIReachesHTTPSAgent: the CLI reaches an HTTPS agent that requires
// a client certificate with the NOMAD_* variables or the flags, and fails
// with a clear error without them.
func TestCLIReachesHTTPSAgent(t *testing.T) {
	dir := t.TempDir()
	caPEM, caKey, err := tlsutil.GenerateCA(tlsutil.CAOptions{})
	if err != nil {
		t.Fatal(err)
	}
	files := map[string][]byte{"ca.pem": caPEM}
	for _, kind := range []tlsutil.Kind{tlsutil.KindServer, tlsutil.KindCLI} {
		c, k, err := tlsutil.GenerateCert(tlsutil.CertOptions{Kind: kind, CACertPEM: caPEM, CAKeyPEM: caKey})
		if err != nil {
			t.Fatal(err)
		}
		files[string(kind)+".pem"], files[string(kind)+"-key.pem"] = c, k
	}
	for name, b := range files {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	path := func(n string) string { return filepath.Join(dir, n) }
	agentTLS, err := tlsutil.NewConfigurator(tlsutil.Config{EnableHTTP: true, CAFile: path("ca.pem"), CertFile: path("server.pem"),
		KeyFile: path("server-key.pem"), VerifyHTTPSClient: true, Region: "global"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("X-Nomad-Index", "1")
		_, _ = io.WriteString(w, "[]")
	}))
	srv.TLS = agentTLS.HTTPServer()
	srv.Config.ErrorLog = log.New(io.Discard, "", 0)
	srv.StartTLS()
	defer srv.Close()

	env := map[string]string{"NOMAD_ADDR": srv.URL}
	withEnv := func(extra map[string]string) map[string]string {
		out := map[string]string{}
		for k, v := range env {
			out[k] = v
		}
		for k, v := range extra {
			out[k] = v
		}
		return out
	}
	full := map[string]string{"NOMAD_CACERT": path("ca.pem"), "NOMAD_CLIENT_CERT": path("cli.pem"), "NOMAD_CLIENT_KEY": path("cli-key.pem")}
	for _, tc := range []struct {
		name    string
		env     map[string]string
		args    []string
		wantErr string // in stderr; "" succeeds
	}{
		{"environment", withEnv(full), nil, ""},
		{"flags", env, []string{"-ca-cert", path("ca.pem"), "-client-cert", path("cli.pem"), "-client-key", path("cli-key.pem")}, ""},
		{"CA directory", withEnv(map[string]string{"NOMAD_CAPATH": dir, "NOMAD_CLIENT_CERT": path("cli.pem"), "NOMAD_CLIENT_KEY": path("cli-key.pem")}), nil, ""},
		{"skip verify still needs the client certificate", withEnv(map[string]string{"NOMAD_SKIP_VERIFY": "true"}), nil, "set -client-cert and -client-key"},
		{"unknown CA", withEnv(map[string]string{"NOMAD_CLIENT_CERT": path("cli.pem"), "NOMAD_CLIENT_KEY": path("cli-key.pem")}), nil, "set -ca-cert or NOMAD_CACERT"},
		{"plain http to HTTPS", withEnv(map[string]string{"NOMAD_ADDR": strings.Replace(srv.URL, "https://", "http://", 1)}), nil, "use an https:// address"},
		{"server name checked", withEnv(map[string]string{"NOMAD_CACERT": path("ca.pem"), "NOMAD_CLIENT_CERT": path("cli.pem"),
			"NOMAD_CLIENT_KEY": path("cli-key.pem"), "NOMAD_TLS_SERVER_NAME": "client.global.nomad"}), nil, "-tls-server-name"},
		{"key without certificate", withEnv(map[string]string{"NOMAD_CACERT": path("ca.pem"), "NOMAD_CLIENT_KEY": path("cli-key.pem")}), nil, "needs both"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := runWithEnv(t, tc.env, append([]string{"namespace", "list"}, tc.args...)...)
			if tc.wantErr == "" {
				if r.code != 0 {
					t.Fatalf("exit %d: %s", r.code, r.stderr)
				}
				return
			}
			if r.code == 0 || !strings.Contains(r.stderr, tc.wantErr) {
				t.Fatalf("exit %d, stderr %q; want %q", r.code, r.stderr, tc.wantErr)
			}
		})
	}
}
