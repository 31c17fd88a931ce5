package tlsutil

import (
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"sync"
	"time"
)

// sessionCacheSize is how many TLS sessions (one per server address) the
// client configs remember for resumption.
const sessionCacheSize = 128

// Configurator holds an agent's certificate, key and CA and hands out the
// *tls.Config of each listener and dialer. The configs read the current
// pair and CA at every handshake, so that Reload takes effect on the next
// connection. It is safe for concurrent use.
type Configurator struct {
	cfg        Config
	logger     *slog.Logger
	now        func() time.Time
	minVersion uint16
	ciphers    []uint16
	// sessions is the client configs' shared session cache.
	sessions tls.ClientSessionCache
	// httpServer and rpcServer are long-lived: their session ticket keys
	// let callers resume sessions.
	httpServer *tls.Config
	rpcServer  *tls.Config

	mu  sync.RWMutex // guards the fields below
	set *keySet
}

// keySet is what the files held at the last load.
type keySet struct {
	cert *tls.Certificate
	leaf *x509.Certificate
	pool *x509.CertPool
	// verified remembers the peer certificates whose chain to pool was
	// checked: verifyKey -> time.Time, the end of the chain's validity.
	// An agent reconnecting (a resumed session included) is not checked
	// again; a reload makes a new keySet, so a new CA checks every peer
	// again. Only certificates the CA signed get in: peers, not callers.
	verified sync.Map
}

// verifyKey names a peer certificate checked for a usage.
type verifyKey struct {
	leaf  [sha256.Size]byte
	usage x509.ExtKeyUsage
}

// Option changes a Configurator.
type Option func(*Configurator)

// WithClock makes the Configurator judge certificate validity at now()
// (tests).
func WithClock(now func() time.Time) Option { return func(c *Configurator) { c.now = now } }

// NewConfigurator checks cfg and loads its files. A certificate that does
// not match its key, that has expired or that the CA did not sign is an
// error naming the file and what to do.
func NewConfigurator(cfg Config, logger *slog.Logger, opts ...Option) (*Configurator, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	c := &Configurator{cfg: cfg, logger: logger, now: time.Now, sessions: tls.NewLRUClientSessionCache(sessionCacheSize)}
	for _, o := range opts {
		o(c)
	}
	c.minVersion, _ = cfg.minVersion()
	c.ciphers, _ = cfg.cipherSuites()
	set, err := c.load()
	if err != nil {
		return nil, err
	}
	c.set = set
	c.httpServer = c.baseConfig()
	c.httpServer.GetConfigForClient = func(hello *tls.ClientHelloInfo) (*tls.Config, error) {
		return c.serverConfig(hello, "http"), nil
	}
	c.rpcServer = c.baseConfig()
	c.rpcServer.GetConfigForClient = func(hello *tls.ClientHelloInfo) (*tls.Config, error) {
		return c.serverConfig(hello, "rpc"), nil
	}
	return c, nil
}

// Config returns the tls block the Configurator was made of.
func (c *Configurator) Config() Config { return c.cfg }

// Reload reads the files again. On error the former pair and CA stay in
// force and the error says what is wrong with the files.
func (c *Configurator) Reload() error {
	set, err := c.load()
	if err != nil {
		return err
	}
	c.mu.Lock()
	c.set = set
	c.mu.Unlock()
	c.logger.Info("TLS certificate reloaded", "cert_file", c.cfg.CertFile,
		"subject", set.leaf.Subject.CommonName, "not_after", set.leaf.NotAfter)
	return nil
}

// load reads and checks the CA, certificate and key files.
func (c *Configurator) load() (*keySet, error) {
	caPEM, err := os.ReadFile(c.cfg.CAFile)
	if err != nil {
		return nil, fmt.Errorf("read tls.ca_file: %w", err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(caPEM) {
		return nil, fmt.Errorf("tls.ca_file %s holds no PEM certificate", c.cfg.CAFile)
	}
	pair, err := tls.LoadX509KeyPair(c.cfg.CertFile, c.cfg.KeyFile)
	if err != nil {
		if strings.Contains(err.Error(), "does not match") {
			return nil, fmt.Errorf("tls.cert_file %s and tls.key_file %s do not match: the key is not the certificate's; give the key made with this certificate (drover tls cert create writes both)",
				c.cfg.CertFile, c.cfg.KeyFile)
		}
		return nil, fmt.Errorf("load tls.cert_file %s and tls.key_file %s: %w", c.cfg.CertFile, c.cfg.KeyFile, err)
	}
	leaf, err := x509.ParseCertificate(pair.Certificate[0])
	if err != nil {
		return nil, fmt.Errorf("parse tls.cert_file %s: %w", c.cfg.CertFile, err)
	}
	now := c.now()
	switch {
	case now.After(leaf.NotAfter):
		return nil, fmt.Errorf("tls.cert_file %s expired on %s: make a new one (drover tls cert create) and reload the agent (SIGHUP)",
			c.cfg.CertFile, leaf.NotAfter.UTC().Format(time.RFC3339))
	case now.Before(leaf.NotBefore):
		return nil, fmt.Errorf("tls.cert_file %s is not valid before %s: check this host's clock",
			c.cfg.CertFile, leaf.NotBefore.UTC().Format(time.RFC3339))
	}
	inter := x509.NewCertPool()
	for _, der := range pair.Certificate[1:] {
		if ic, err := x509.ParseCertificate(der); err == nil {
			inter.AddCert(ic)
		}
	}
	if _, err := leaf.Verify(x509.VerifyOptions{Roots: pool, Intermediates: inter, CurrentTime: now,
		KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageAny}}); err != nil {
		return nil, fmt.Errorf("tls.cert_file %s is not signed by tls.ca_file %s: %w", c.cfg.CertFile, c.cfg.CAFile, err)
	}
	pair.Leaf = leaf
	return &keySet{cert: &pair, leaf: leaf, pool: pool}, nil
}

// current returns the pair and CA in force.
func (c *Configurator) current() *keySet {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.set
}

// baseConfig is what every config shares.
func (c *Configurator) baseConfig() *tls.Config {
	return &tls.Config{MinVersion: c.minVersion, CipherSuites: c.ciphers}
}

// HTTPServer returns the HTTP API's server config: the agent's
// certificate, and with verify_https_client a required client
// certificate signed by the CA.
func (c *Configurator) HTTPServer() *tls.Config { return c.httpServer }

// RPCServer returns the RPC port's server config: mutual TLS, the caller's
// certificate signed by the CA (and, with verify_server_hostname, naming a
// server or a client of the region).
func (c *Configurator) RPCServer() *tls.Config { return c.rpcServer }

// serverConfig is the config of one incoming handshake on listener
// ("http" or "rpc"); a refused caller is logged with its address.
func (c *Configurator) serverConfig(hello *tls.ClientHelloInfo, listener string) *tls.Config {
	set := c.current()
	cfg := c.baseConfig()
	cfg.Certificates = []tls.Certificate{*set.cert}
	var names []string
	switch {
	case listener == "rpc":
		if c.cfg.VerifyServerHostname {
			names = []string{ServerName(c.cfg.Region), ClientName(c.cfg.Region)}
		}
	case !c.cfg.VerifyHTTPSClient:
		return cfg
	}
	// RequestClientCert rather than RequireAndVerifyClientCert: the check
	// is ours (VerifyConnection), so that every refusal is logged with the
	// caller's address and a reason people can act on.
	cfg.ClientAuth = tls.RequestClientCert
	remote := "unknown"
	if hello.Conn != nil {
		remote = hello.Conn.RemoteAddr().String()
	}
	cfg.VerifyConnection = func(cs tls.ConnectionState) error {
		err := verifyPeer(cs, set, c.now(), x509.ExtKeyUsageClientAuth, names, "caller")
		if err != nil {
			c.logger.Warn("TLS connection refused", "listener", listener, "remote_addr", remote, "error", err)
		}
		return err
	}
	return cfg
}

// RPCClient returns the config of the agent's connections to servers'
// RPC ports (client RPCs, forwarding, raft): its certificate, the server's
// checked against the CA and, with verify_server_hostname, against
// server.<region>.nomad. Sessions are resumed from a shared cache.
func (c *Configurator) RPCClient() *tls.Config {
	var names []string
	if c.cfg.VerifyServerHostname {
		names = []string{ServerName(c.cfg.Region)}
	}
	return c.clientConfig(names)
}

// HTTPClient returns the config of the agent's HTTPS requests to other
// agents' HTTP APIs: their certificates checked against the CA only (a
// client agent's certificate names client.<region>.nomad).
func (c *Configurator) HTTPClient() *tls.Config { return c.clientConfig(nil) }

func (c *Configurator) clientConfig(names []string) *tls.Config {
	cfg := c.baseConfig()
	cfg.ClientSessionCache = c.sessions
	// The chain and the name are checked in VerifyConnection against the
	// CA in force at the handshake (Reload may change it), not against a
	// RootCAs fixed here.
	cfg.InsecureSkipVerify = true
	cfg.GetClientCertificate = func(*tls.CertificateRequestInfo) (*tls.Certificate, error) {
		return c.current().cert, nil
	}
	cfg.VerifyConnection = func(cs tls.ConnectionState) error {
		return verifyPeer(cs, c.current(), c.now(), x509.ExtKeyUsageServerAuth, names, "server")
	}
	return cfg
}

// errNoCertificate is a peer that showed no certificate.
var errNoCertificate = errors.New("no certificate was presented")

// verifyPeer checks the peer's certificate chain against set's CA for
// usage and, when names are given, that it names one of them. The error
// says what is wrong in words: unknown CA, expired, wrong name.
func verifyPeer(cs tls.ConnectionState, set *keySet, now time.Time, usage x509.ExtKeyUsage, names []string, who string) error {
	if len(cs.PeerCertificates) == 0 {
		return fmt.Errorf("the %s's certificate is required: %w (configure its tls cert_file and key_file, or the CLI's -client-cert and -client-key)", who, errNoCertificate)
	}
	leaf := cs.PeerCertificates[0]
	key := verifyKey{leaf: sha256.Sum256(leaf.Raw), usage: usage}
	if until, ok := set.verified.Load(key); !ok || now.Before(leaf.NotBefore) || !now.Before(until.(time.Time)) {
		inter := x509.NewCertPool()
		for _, ic := range cs.PeerCertificates[1:] {
			inter.AddCert(ic)
		}
		chains, err := leaf.Verify(x509.VerifyOptions{Roots: set.pool, Intermediates: inter, CurrentTime: now, KeyUsages: []x509.ExtKeyUsage{usage}})
		if err != nil {
			return describeVerifyError(leaf, who, err)
		}
		set.verified.Store(key, chainNotAfter(chains[0]))
	}
	if len(names) == 0 {
		return nil
	}
	for _, n := range names {
		if leaf.VerifyHostname(n) == nil {
			return nil
		}
	}
	return fmt.Errorf("the %s's certificate (%s) does not name %s: use a certificate made for this role and region (drover tls cert create -server|-client -region)",
		who, describeNames(leaf), strings.Join(names, " or "))
}

// chainNotAfter is when the first certificate of chain expires.
func chainNotAfter(chain []*x509.Certificate) time.Time {
	end := chain[0].NotAfter
	for _, c := range chain[1:] {
		if c.NotAfter.Before(end) {
			end = c.NotAfter
		}
	}
	return end
}

// describeVerifyError turns x509's verification errors into sentences.
func describeVerifyError(leaf *x509.Certificate, who string, err error) error {
	var ua x509.UnknownAuthorityError
	var inv x509.CertificateInvalidError
	switch {
	case errors.As(err, &ua):
		return fmt.Errorf("the %s's certificate (%s) is signed by an unknown CA %q, not by this agent's tls.ca_file: %w",
			who, describeNames(leaf), leaf.Issuer.CommonName, err)
	case errors.As(err, &inv) && inv.Reason == x509.Expired:
		return fmt.Errorf("the %s's certificate (%s) is expired or not yet valid (valid %s to %s): %w", who, describeNames(leaf),
			leaf.NotBefore.UTC().Format(time.RFC3339), leaf.NotAfter.UTC().Format(time.RFC3339), err)
	case errors.As(err, &inv) && inv.Reason == x509.IncompatibleUsage:
		return fmt.Errorf("the %s's certificate (%s) is not made for this use (extended key usage): %w", who, describeNames(leaf), err)
	}
	return fmt.Errorf("the %s's certificate (%s) is not valid: %w", who, describeNames(leaf), err)
}

// describeNames names a certificate by its common name and DNS names.
func describeNames(c *x509.Certificate) string {
	parts := []string{}
	if c.Subject.CommonName != "" {
		parts = append(parts, "CN="+c.Subject.CommonName)
	}
	if len(c.DNSNames) > 0 {
		parts = append(parts, "DNS="+strings.Join(c.DNSNames, ","))
	}
	if len(parts) == 0 {
		return "no name"
	}
	return strings.Join(parts, " ")
}

// PeerNames reports whether the peer certificate of cs names name (the
// RPC port's check that a raft connection comes from a server).
func PeerNames(cs tls.ConnectionState, name string) error {
	if len(cs.PeerCertificates) == 0 {
		return errNoCertificate
	}
	if err := cs.PeerCertificates[0].VerifyHostname(name); err != nil {
		return fmt.Errorf("the peer's certificate (%s) does not name %s", describeNames(cs.PeerCertificates[0]), name)
	}
	return nil
}
