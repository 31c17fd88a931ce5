package tlsutil

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/x509"
	"encoding/pem"
	"net"
	"slices"
	"strings"
	"testing"
	"time"
)

func parseCert(t *testing.T, b []byte) *x509.Certificate {
	t.Helper()
	block, _ := pem.Decode(b)
	if block == nil || block.Type != "CERTIFICATE" {
		t.Fatalf("not a PEM certificate: %q", b)
	}
	c, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestFileNames(t *testing.T) {
	c, k := CAFileNames(DefaultDomain)
	if c != "nomad-agent-ca.pem" || k != "nomad-agent-ca-key.pem" {
		t.Fatalf("CA files %s %s", c, k)
	}
	for _, tc := range []struct {
		kind      Kind
		cert, key string
	}{
		{KindServer, "global-server-nomad.pem", "global-server-nomad-key.pem"},
		{KindClient, "global-client-nomad.pem", "global-client-nomad-key.pem"},
		{KindCLI, "global-cli-nomad.pem", "global-cli-nomad-key.pem"},
	} {
		c, k := CertFileNames(DefaultDomain, DefaultRegion, tc.kind)
		if c != tc.cert || k != tc.key {
			t.Errorf("%s: files %s %s, want %s %s", tc.kind, c, k, tc.cert, tc.key)
		}
	}
}

func TestGenerateCert(t *testing.T) {
	caPEM, caKey, err := GenerateCA(CAOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ca := parseCert(t, caPEM)
	if !ca.IsCA || !strings.HasPrefix(ca.Subject.CommonName, "Nomad Agent CA ") {
		t.Fatalf("CA: IsCA %v, CN %q", ca.IsCA, ca.Subject.CommonName)
	}
	if k, ok := ca.PublicKey.(*ecdsa.PublicKey); !ok || k.Curve != elliptic.P256() {
		t.Fatalf("CA key is %T, want ECDSA P-256", ca.PublicKey)
	}
	if d := ca.NotAfter.Sub(ca.NotBefore); d < (DefaultCADays-1)*24*time.Hour {
		t.Fatalf("CA valid for %v", d)
	}
	pool := x509.NewCertPool()
	pool.AddCert(ca)
	for _, tc := range []struct {
		o       CertOptions
		name    string
		dns     []string
		ips     []string
		usages  []x509.ExtKeyUsage
		wantErr string
	}{
		{o: CertOptions{Kind: KindServer}, name: "server.global.nomad", dns: []string{"server.global.nomad", "localhost"}, ips: []string{"127.0.0.1"},
			usages: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth}},
		{o: CertOptions{Kind: KindClient, Region: "east", DNSNames: []string{"node1.example"}, IPAddresses: []net.IP{net.ParseIP("10.0.0.5")}},
			name: "client.east.nomad", dns: []string{"client.east.nomad", "localhost", "node1.example"}, ips: []string{"127.0.0.1", "10.0.0.5"},
			usages: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth}},
		{o: CertOptions{Kind: KindCLI}, name: "cli.global.nomad", dns: []string{"cli.global.nomad", "localhost"},
			usages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}},
		{o: CertOptions{Kind: "admin"}, wantErr: "use server, client or cli"},
		{o: CertOptions{Kind: KindServer, Days: 10 * 365}, wantErr: "outlive its CA"},
	} {
		t.Run(string(tc.o.Kind), func(t *testing.T) {
			tc.o.CACertPEM, tc.o.CAKeyPEM = caPEM, caKey
			cp, kp, err := GenerateCert(tc.o)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(string(kp), "EC PRIVATE KEY") {
				t.Fatalf("key PEM: %s", kp)
			}
			c := parseCert(t, cp)
			var ips []string
			for _, ip := range c.IPAddresses {
				ips = append(ips, ip.String())
			}
			if c.Subject.CommonName != tc.name || !slices.Equal(c.DNSNames, tc.dns) || !slices.Equal(ips, tc.ips) || !slices.Equal(c.ExtKeyUsage, tc.usages) {
				t.Fatalf("cert CN %q DNS %v IPs %v usages %v", c.Subject.CommonName, c.DNSNames, ips, c.ExtKeyUsage)
			}
			if _, err := c.Verify(x509.VerifyOptions{Roots: pool, DNSName: tc.name, KeyUsages: tc.usages}); err != nil {
				t.Fatalf("does not verify against its CA: %v", err)
			}
		})
	}
	if _, _, err := GenerateCert(CertOptions{Kind: KindServer, CACertPEM: caPEM, CAKeyPEM: []byte("junk")}); err == nil {
		t.Fatal("a junk CA key made a certificate")
	}
}
