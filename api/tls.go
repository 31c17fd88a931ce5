package api

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
)

// TLSConfig is how a Client reaches an agent that serves HTTPS (the
// agent's tls { http = true }): the CA to trust and, when the agent
// requires one (verify_https_client), the client certificate to show.
// The field names are Nomad's api.TLSConfig's.
type TLSConfig struct {
	// CACert is a PEM file of the CA that signed the agent's certificate;
	// CAPath a directory of such files; CACertPEM the PEM itself. None
	// set: the system's roots.
	CACert    string
	CAPath    string
	CACertPEM []byte
	// ClientCert and ClientKey are the PEM files of the client
	// certificate; ClientCertPEM and ClientKeyPEM the PEM themselves.
	ClientCert    string
	ClientKey     string
	ClientCertPEM []byte
	ClientKeyPEM  []byte
	// TLSServerName is the name to check the agent's certificate against
	// instead of the address's host (server.global.nomad).
	TLSServerName string
	// Insecure skips the check of the agent's certificate.
	Insecure bool
}

// tlsEnvConfig reads the TLS settings of the environment (DROVER_* first,
// then NOMAD_*); nil when none is set.
func tlsEnvConfig() *TLSConfig {
	t := &TLSConfig{
		CACert:        firstEnv("", "DROVER_CACERT", "NOMAD_CACERT"),
		CAPath:        firstEnv("", "DROVER_CAPATH", "NOMAD_CAPATH"),
		ClientCert:    firstEnv("", "DROVER_CLIENT_CERT", "NOMAD_CLIENT_CERT"),
		ClientKey:     firstEnv("", "DROVER_CLIENT_KEY", "NOMAD_CLIENT_KEY"),
		TLSServerName: firstEnv("", "DROVER_TLS_SERVER_NAME", "NOMAD_TLS_SERVER_NAME"),
	}
	if v := firstEnv("", "DROVER_SKIP_VERIFY", "NOMAD_SKIP_VERIFY"); v != "" {
		t.Insecure, _ = strconv.ParseBool(v)
	}
	if t.CACert == "" && t.CAPath == "" && t.ClientCert == "" && t.ClientKey == "" && t.TLSServerName == "" && !t.Insecure {
		return nil
	}
	return t
}

// tlsClientConfig builds the *tls.Config of t, reading its files.
func (t *TLSConfig) tlsClientConfig() (*tls.Config, error) {
	cfg := &tls.Config{MinVersion: tls.VersionTLS12, ServerName: t.TLSServerName, InsecureSkipVerify: t.Insecure}
	if t.CACert != "" || t.CAPath != "" || len(t.CACertPEM) > 0 {
		pool := x509.NewCertPool()
		files := []string{}
		if t.CACert != "" {
			files = append(files, t.CACert)
		}
		if t.CAPath != "" {
			entries, err := os.ReadDir(t.CAPath)
			if err != nil {
				return nil, fmt.Errorf("read the CA directory (CAPath): %w", err)
			}
			for _, e := range entries {
				if !e.IsDir() {
					files = append(files, filepath.Join(t.CAPath, e.Name()))
				}
			}
		}
		for _, f := range files {
			b, err := os.ReadFile(f)
			if err != nil {
				return nil, fmt.Errorf("read the CA certificate: %w", err)
			}
			if !pool.AppendCertsFromPEM(b) && f == t.CACert {
				return nil, fmt.Errorf("the CA certificate %s holds no PEM certificate", f)
			}
		}
		if len(t.CACertPEM) > 0 && !pool.AppendCertsFromPEM(t.CACertPEM) {
			return nil, errors.New("CACertPEM holds no PEM certificate")
		}
		cfg.RootCAs = pool
	}
	certPEM, keyPEM := t.ClientCertPEM, t.ClientKeyPEM
	if t.ClientCert != "" || t.ClientKey != "" {
		if t.ClientCert == "" || t.ClientKey == "" {
			return nil, errors.New("a client certificate needs both its certificate and its key (-client-cert and -client-key, or NOMAD_CLIENT_CERT and NOMAD_CLIENT_KEY)")
		}
		var err error
		if certPEM, err = os.ReadFile(t.ClientCert); err != nil {
			return nil, fmt.Errorf("read the client certificate: %w", err)
		}
		if keyPEM, err = os.ReadFile(t.ClientKey); err != nil {
			return nil, fmt.Errorf("read the client key: %w", err)
		}
	}
	if len(certPEM) > 0 || len(keyPEM) > 0 {
		pair, err := tls.X509KeyPair(certPEM, keyPEM)
		if err != nil {
			return nil, fmt.Errorf("load the client certificate %s and key %s: %w", t.ClientCert, t.ClientKey, err)
		}
		cfg.Certificates = []tls.Certificate{pair}
	}
	return cfg, nil
}

// httpClientFor returns the HTTP client of a Config without one: the
// default transport's settings, with t's TLS when set.
func httpClientFor(t *TLSConfig) (*http.Client, error) {
	if t == nil {
		return &http.Client{}, nil
	}
	tc, err := t.tlsClientConfig()
	if err != nil {
		return nil, err
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.TLSClientConfig = tc
	return &http.Client{Transport: tr}, nil
}
