package command

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"flag"
	"fmt"
	"strconv"
	"strings"

	"github.com/drover-io/drover/api"
)

// tlsFlags are the TLS options of commands that talk to an agent serving
// HTTPS, as Nomad's; each overrides its environment variable.
type tlsFlags struct {
	caCert, caPath, clientCert, clientKey, serverName string
	skipVerify                                        optionalBool
}

func (t *tlsFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&t.caCert, "ca-cert", t.caCert,
		"The CA certificate (PEM file) that signed the agent's HTTPS certificate. Overrides NOMAD_CACERT.")
	fs.StringVar(&t.caPath, "ca-path", t.caPath,
		"A directory of CA certificates (PEM files). Overrides NOMAD_CAPATH.")
	fs.StringVar(&t.clientCert, "client-cert", t.clientCert,
		"The client certificate (PEM file) to show an agent with verify_https_client. Overrides NOMAD_CLIENT_CERT.")
	fs.StringVar(&t.clientKey, "client-key", t.clientKey,
		"The client certificate's key (PEM file). Overrides NOMAD_CLIENT_KEY.")
	fs.StringVar(&t.serverName, "tls-server-name", t.serverName,
		"The name to check the agent's certificate against (server.global.nomad). Overrides NOMAD_TLS_SERVER_NAME.")
	fs.Var(&t.skipVerify, "tls-skip-verify",
		"Do not check the agent's certificate (insecure). Overrides NOMAD_SKIP_VERIFY.")
}

// optionalBool is a boolean flag that remembers whether it was given.
type optionalBool struct {
	set, value bool
}

func (b *optionalBool) String() string {
	if b == nil || !b.set {
		return ""
	}
	return strconv.FormatBool(b.value)
}

func (b *optionalBool) Set(s string) error {
	v, err := strconv.ParseBool(s)
	if err != nil {
		return err
	}
	b.set, b.value = true, v
	return nil
}

// IsBoolFlag lets -tls-skip-verify stand alone.
func (b *optionalBool) IsBoolFlag() bool { return true }

// setting returns flag when set, else the first of the environment
// variables that is.
func (m *Meta) setting(flag string, envs ...string) string {
	if flag != "" {
		return flag
	}
	for _, k := range envs {
		if v := m.getenv(k); v != "" {
			return v
		}
	}
	return ""
}

// tlsConfig returns the API client's TLS settings from the flags and the
// environment; nil when none is set (an https:// address then checks the
// agent against the system's roots).
func (m *Meta) tlsConfig() *api.TLSConfig {
	t := &api.TLSConfig{
		CACert:        m.setting(m.tls.caCert, "DROVER_CACERT", "NOMAD_CACERT"),
		CAPath:        m.setting(m.tls.caPath, "DROVER_CAPATH", "NOMAD_CAPATH"),
		ClientCert:    m.setting(m.tls.clientCert, "DROVER_CLIENT_CERT", "NOMAD_CLIENT_CERT"),
		ClientKey:     m.setting(m.tls.clientKey, "DROVER_CLIENT_KEY", "NOMAD_CLIENT_KEY"),
		TLSServerName: m.setting(m.tls.serverName, "DROVER_TLS_SERVER_NAME", "NOMAD_TLS_SERVER_NAME"),
	}
	if m.tls.skipVerify.set {
		t.Insecure = m.tls.skipVerify.value
	} else if v := m.setting("", "DROVER_SKIP_VERIFY", "NOMAD_SKIP_VERIFY"); v != "" {
		t.Insecure, _ = strconv.ParseBool(v)
	}
	if t.CACert == "" && t.CAPath == "" && t.ClientCert == "" && t.ClientKey == "" && t.TLSServerName == "" && !t.Insecure {
		return nil
	}
	return t
}

// tlsErrorText renders the errors of TLS with the agent, which are not
// "no agent there": the CA, the client certificate, the name or the
// scheme is wrong, and the text says which setting fixes it.
func tlsErrorText(doing string, err error) (string, bool) {
	var ue *api.UnexpectedResponseError
	if errors.As(err, &ue) && strings.Contains(ue.Message, "HTTP request to an HTTPS server") {
		return fmt.Sprintf("Error %s: the agent serves HTTPS: use an https:// address (-address or NOMAD_ADDR)", doing), true
	}
	var ce *api.ConnectError
	if !errors.As(err, &ce) {
		return "", false
	}
	var (
		unknown  x509.UnknownAuthorityError
		hostname x509.HostnameError
		invalid  x509.CertificateInvalidError
		alert    tls.AlertError
		record   tls.RecordHeaderError
		verify   *tls.CertificateVerificationError
	)
	var hint string
	switch {
	case errors.As(err, &unknown):
		hint = "the agent's certificate is signed by a CA this CLI does not trust: set -ca-cert or NOMAD_CACERT to the cluster's CA (nomad-agent-ca.pem)"
	case errors.As(err, &hostname):
		hint = "the agent's certificate does not name the address used: reach it at a name it has, or set -tls-server-name or NOMAD_TLS_SERVER_NAME (server.<region>.nomad)"
	case errors.As(err, &invalid):
		hint = "the agent's certificate is not valid (expired?): the agent needs a new one (drover tls cert create, then SIGHUP)"
	case errors.As(err, &record):
		hint = "the agent does not serve HTTPS: use an http:// address"
	case errors.As(err, &alert), errors.As(err, &verify), strings.Contains(err.Error(), "tls:"):
		hint = "the agent refused this CLI's certificate or asked for one: set -client-cert and -client-key (or NOMAD_CLIENT_CERT and NOMAD_CLIENT_KEY) to a certificate signed by the cluster's CA (drover tls cert create -cli)"
	default:
		return "", false
	}
	return fmt.Sprintf("Error %s: TLS with the agent at %s failed: %s.\n  (%v)", doing, ce.Address, hint, rootCause(ce.Err)), true
}
