package agent

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestTLSConfigBlock(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		name, hcl string
		check     func(t *testing.T, c *Config)
		wantErr   string // from Validate
	}{
		{name: "every key", hcl: `
server { encrypt = "ZBjKi3lb0dyJ8Rc0Q6sCP/yXxoN+Pp6rWL5jFZbYeYM=" }
tls {
  http = true
  rpc = true
  ca_file = "ca.pem"
  cert_file = "c.pem"
  key_file = "k.pem"
  verify_server_hostname = true
  verify_https_client = true
  rpc_upgrade_mode = true
  tls_min_version = "tls13"
  tls_cipher_suites = "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256, TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256"
  tls_prefer_server_cipher_suites = true
}`, check: func(t *testing.T, c *Config) {
			tl := c.TLS
			if !tl.EnableHTTP || !tl.EnableRPC || tl.CAFile != "ca.pem" || tl.CertFile != "c.pem" || tl.KeyFile != "k.pem" ||
				!tl.VerifyServerHostname || !tl.VerifyHTTPSClient || !tl.RPCUpgradeMode || tl.MinVersion != "tls13" ||
				!slices.Equal(tl.CipherSuites, []string{"TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256", "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256"}) {
				t.Errorf("tls = %+v", tl)
			}
			if key, err := c.Server.gossipKey(); err != nil || len(key) != 32 {
				t.Errorf("gossip key %d bytes, %v", len(key), err)
			}
			if len(c.Warnings) != 1 || c.Warnings[0].Key != "tls.tls_prefer_server_cipher_suites" {
				t.Errorf("warnings = %+v", c.Warnings)
			}
		}},
		{name: "tls without files", hcl: `tls { rpc = true }`, wantErr: "tls.ca_file is required"},
		{name: "gossip key not base64", hcl: `server { encrypt = "not base64!" }`, wantErr: "server.encrypt is not base64"},
		{name: "gossip key of 20 bytes", hcl: `server { encrypt = "AAAAAAAAAAAAAAAAAAAAAAAAAAA=" }`, wantErr: "must be 16, 24 or 32 bytes"},
		{name: "unknown version", hcl: `tls { tls_min_version = "ssl3" }`, wantErr: "tls_min_version"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(dir, strings.ReplaceAll(tc.name, " ", "_")+".hcl")
			writeFile(t, path, tc.hcl+"\nclient { enabled = true\n servers = [\"127.0.0.1\"] }\ndata_dir = \"/tmp/x\"\n")
			c := loadFiles(t, DefaultConfig(), path)
			err := c.Validate()
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("Validate = %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			tc.check(t, c)
		})
	}
}
