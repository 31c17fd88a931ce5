package tlsutil

import (
	"crypto/tls"
	"errors"
	"fmt"
	"slices"
	"strings"
)

// Config is an agent's tls block, as Nomad's.
type Config struct {
	// EnableHTTP serves the HTTP API over HTTPS (tls.http).
	EnableHTTP bool
	// EnableRPC makes the RPC port (client RPCs, server forwarding, raft)
	// mutual TLS (tls.rpc).
	EnableRPC bool
	// CAFile, CertFile and KeyFile are PEM files: the CA that signs every
	// agent's certificate, and this agent's certificate and key.
	CAFile   string
	CertFile string
	KeyFile  string
	// VerifyServerHostname makes an agent calling a server check that the
	// server's certificate names server.<region>.nomad, and a server
	// accept RPC callers whose certificate names server.<region>.nomad or
	// client.<region>.nomad only.
	VerifyServerHostname bool
	// VerifyHTTPSClient requires HTTPS clients (the CLI, API users) to
	// show a certificate signed by the CA.
	VerifyHTTPSClient bool
	// RPCUpgradeMode accepts plain-text connections on the RPC port as
	// well as TLS ones, while a cluster moves to TLS.
	RPCUpgradeMode bool
	// MinVersion is tls10, tls11, tls12 or tls13; "" is tls12.
	MinVersion string
	// CipherSuites are Go's (IANA) cipher suite names; empty uses Go's
	// defaults. They apply to TLS 1.2 and below.
	CipherSuites []string
	// Region names the agent's region, for the certificate names.
	Region string
}

// Enabled reports whether any listener uses TLS.
func (c *Config) Enabled() bool { return c.EnableHTTP || c.EnableRPC }

// ServerName is the name a server's certificate has in region.
func ServerName(region string) string { return "server." + region + ".nomad" }

// ClientName is the name a client's certificate has in region.
func ClientName(region string) string { return "client." + region + ".nomad" }

// CLIName is the name a CLI certificate has in region.
func CLIName(region string) string { return "cli." + region + ".nomad" }

// tlsVersions maps the tls_min_version values to Go's versions.
var tlsVersions = map[string]uint16{
	"tls10": tls.VersionTLS10,
	"tls11": tls.VersionTLS11,
	"tls12": tls.VersionTLS12,
	"tls13": tls.VersionTLS13,
}

// Validate checks the block: the files it needs are named, the version
// and cipher suites are known. It reads no file (NewConfigurator does).
func (c *Config) Validate() error {
	var errs []error
	if c.Enabled() {
		if c.CAFile == "" {
			errs = append(errs, errors.New("tls.ca_file is required when tls.http or tls.rpc is on: the CA that signs the agents' certificates (drover tls ca create)"))
		}
		if c.CertFile == "" || c.KeyFile == "" {
			errs = append(errs, errors.New("tls.cert_file and tls.key_file are required when tls.http or tls.rpc is on (drover tls cert create)"))
		}
	}
	if _, err := c.minVersion(); err != nil {
		errs = append(errs, err)
	}
	if _, err := c.cipherSuites(); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

func (c *Config) minVersion() (uint16, error) {
	if c.MinVersion == "" {
		return tls.VersionTLS12, nil
	}
	v, ok := tlsVersions[strings.ToLower(c.MinVersion)]
	if !ok {
		return 0, fmt.Errorf("tls.tls_min_version = %q: use tls10, tls11, tls12 or tls13", c.MinVersion)
	}
	return v, nil
}

func (c *Config) cipherSuites() ([]uint16, error) {
	if len(c.CipherSuites) == 0 {
		return nil, nil
	}
	known := map[string]uint16{}
	for _, s := range tls.CipherSuites() {
		known[s.Name] = s.ID
	}
	var ids []uint16
	var bad []string
	for _, name := range c.CipherSuites {
		name = strings.TrimSpace(name)
		if id, ok := known[name]; ok {
			ids = append(ids, id)
		} else if name != "" {
			bad = append(bad, name)
		}
	}
	if len(bad) > 0 {
		names := make([]string, 0, len(known))
		for n := range known {
			names = append(names, n)
		}
		slices.Sort(names)
		return nil, fmt.Errorf("tls.tls_cipher_suites: unknown or insecure suites %s; known: %s",
			strings.Join(bad, ", "), strings.Join(names, ", "))
	}
	return ids, nil
}
