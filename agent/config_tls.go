package agent

import (
	"crypto/tls"
	"encoding/base64"
	"fmt"

	"github.com/drover-io/drover/server"
	"github.com/drover-io/drover/tlsutil"
)

// tlsBlock is a file's tls block (docs/tls.md).
type tlsBlock struct {
	HTTP                 *bool
	RPC                  *bool
	CAFile               *string
	CertFile             *string
	KeyFile              *string
	VerifyServerHostname *bool
	VerifyHTTPSClient    *bool
	RPCUpgradeMode       *bool
	MinVersion           *string
	CipherSuites         *string
}

// tlsIgnored are the tls keys drover accepts and ignores (merged into
// nomadIgnored).
var tlsIgnored = map[string]string{
	"tls_prefer_server_cipher_suites": "Go's TLS picks the cipher suite order itself",
}

func (b *tlsBlock) section() section {
	const p = "tls"
	return section{path: p, keys: map[string]keyFunc{
		"http":                   boolKey(&b.HTTP, p),
		"rpc":                    boolKey(&b.RPC, p),
		"ca_file":                strKey(&b.CAFile, p),
		"cert_file":              strKey(&b.CertFile, p),
		"key_file":               strKey(&b.KeyFile, p),
		"verify_server_hostname": boolKey(&b.VerifyServerHostname, p),
		"verify_https_client":    boolKey(&b.VerifyHTTPSClient, p),
		"rpc_upgrade_mode":       boolKey(&b.RPCUpgradeMode, p),
		"tls_min_version":        strKey(&b.MinVersion, p),
		"tls_cipher_suites":      strKey(&b.CipherSuites, p),
	}}
}

// mergeTLS applies what a file's tls block sets.
func (c *Config) mergeTLS(b *tlsBlock) {
	t := &c.TLS
	setVal(&t.EnableHTTP, b.HTTP)
	setVal(&t.EnableRPC, b.RPC)
	setVal(&t.CAFile, b.CAFile)
	setVal(&t.CertFile, b.CertFile)
	setVal(&t.KeyFile, b.KeyFile)
	setVal(&t.VerifyServerHostname, b.VerifyServerHostname)
	setVal(&t.VerifyHTTPSClient, b.VerifyHTTPSClient)
	setVal(&t.RPCUpgradeMode, b.RPCUpgradeMode)
	setVal(&t.MinVersion, b.MinVersion)
	if b.CipherSuites != nil {
		t.CipherSuites = splitList(*b.CipherSuites)
	}
}

// gossipKey decodes server.encrypt: base64 of 16, 24 or 32 bytes
// (`openssl rand -base64 32`); "" is no encryption.
func (s *ServerConfig) gossipKey() ([]byte, error) {
	if s.Encrypt == "" {
		return nil, nil
	}
	key, err := base64.StdEncoding.DecodeString(s.Encrypt)
	if err != nil {
		return nil, fmt.Errorf("server.encrypt is not base64: %w (make a key with `openssl rand -base64 32`)", err)
	}
	switch len(key) {
	case 16, 24, 32:
		return key, nil
	}
	return nil, fmt.Errorf("server.encrypt is %d bytes: the gossip key must be 16, 24 or 32 bytes, base64-encoded (`openssl rand -base64 32`)", len(key))
}

// validateTLS checks the tls block and the gossip key.
func (c *Config) validateTLS() []error {
	var errs []error
	if err := c.TLS.Validate(); err != nil {
		errs = append(errs, err)
	}
	if _, err := c.Server.gossipKey(); err != nil {
		errs = append(errs, err)
	}
	return errs
}

// tlsConfigurator loads the agent's certificates; nil when the tls block
// enables neither listener.
func (a *Agent) tlsConfigurator() (*tlsutil.Configurator, error) {
	if !a.cfg.TLS.Enabled() {
		return nil, nil
	}
	t := a.cfg.TLS
	t.Region = a.cfg.Region
	c, err := tlsutil.NewConfigurator(t, a.logger.With("component", "tls"))
	if err != nil {
		return nil, fmt.Errorf("tls: %w", err)
	}
	return c, nil
}

// serverRPCTLS is the TLS of the server's RPC port; nil without tls.rpc.
func (a *Agent) serverRPCTLS() *server.RPCTLS {
	if a.tls == nil || !a.cfg.TLS.EnableRPC {
		return nil
	}
	t := &server.RPCTLS{Server: a.tls.RPCServer(), Client: a.tls.RPCClient(), AllowPlaintext: a.cfg.TLS.RPCUpgradeMode}
	if a.cfg.TLS.VerifyServerHostname {
		t.RaftPeerName = tlsutil.ServerName(a.cfg.Region)
	}
	return t
}

// rpcClientTLS is the config of a client-only agent's calls to the
// servers; nil without tls.rpc.
func (a *Agent) rpcClientTLS() *tls.Config {
	if a.tls == nil || !a.cfg.TLS.EnableRPC {
		return nil
	}
	return a.tls.RPCClient()
}

// httpClientTLS is the config of the agent's HTTPS requests to other
// agents (client requests it forwards to the node that runs the
// allocation); nil without tls.http.
func (a *Agent) httpClientTLS() *tls.Config {
	if a.tls == nil || !a.cfg.TLS.EnableHTTP {
		return nil
	}
	return a.tls.HTTPClient()
}

// Reload reads the TLS certificate, key and CA files again (SIGHUP): the
// next connections use them, on every listener and dialer. Without TLS
// there is nothing to reload. On error the former ones stay in force.
func (a *Agent) Reload() error {
	if a.tls == nil {
		a.logger.Info("reload: no tls block, nothing to reload")
		return nil
	}
	if err := a.tls.Reload(); err != nil {
		return fmt.Errorf("reload TLS: %w", err)
	}
	return nil
}

// httpScheme is the HTTP API's scheme: https with tls.http.
func (a *Agent) httpScheme() string {
	if a.cfg.TLS.EnableHTTP {
		return "https"
	}
	return "http"
}
