package docker

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"

	"github.com/drover-io/drover/plugins/base"
)

// clientTLS returns the TLS configuration for the daemon connection: the
// plugin's tls block, else (when the endpoint comes from $DOCKER_HOST)
// Docker's $DOCKER_TLS_VERIFY and $DOCKER_CERT_PATH; nil for none. As
// Nomad's, tls is ignored (with a warning) for a unix socket.
func clientTLS(cfg *Config, logger *slog.Logger) (*tls.Config, error) {
	files := cfg.TLS
	if !files.set() {
		host := os.Getenv("DOCKER_HOST")
		dir := os.Getenv("DOCKER_CERT_PATH")
		if host == "" || cfg.Endpoint != host || os.Getenv("DOCKER_TLS_VERIFY") == "" || dir == "" {
			return nil, nil
		}
		files = TLSConfig{CA: filepath.Join(dir, "ca.pem"), Cert: filepath.Join(dir, "cert.pem"), Key: filepath.Join(dir, "key.pem")}
	}
	if strings.HasPrefix(cfg.Endpoint, "unix:") {
		logger.Warn("the docker plugin's tls block is ignored: the endpoint is a unix socket", "endpoint", cfg.Endpoint)
		return nil, nil
	}
	conf := &tls.Config{MinVersion: tls.VersionTLS12}
	if files.Cert != "" || files.Key != "" {
		if files.Cert == "" || files.Key == "" {
			return nil, &base.ConfigError{Plugin: Name, Field: "tls", Err: fmt.Errorf("cert and key go together: set both or neither")}
		}
		pair, err := tls.LoadX509KeyPair(files.Cert, files.Key)
		if err != nil {
			return nil, &base.ConfigError{Plugin: Name, Field: "tls.cert", Err: fmt.Errorf("load the client certificate and key: %w", err)}
		}
		conf.Certificates = []tls.Certificate{pair}
	}
	if files.CA != "" {
		pem, err := os.ReadFile(files.CA)
		if err != nil {
			return nil, &base.ConfigError{Plugin: Name, Field: "tls.ca", Err: err}
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, &base.ConfigError{Plugin: Name, Field: "tls.ca", Err: fmt.Errorf("%s holds no PEM certificate", files.CA)}
		}
		conf.RootCAs = pool
	}
	return conf, nil
}
