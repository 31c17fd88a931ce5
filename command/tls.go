package command

import (
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"strings"

	"github.com/drover-io/drover/tlsutil"
)

// stringList is a repeatable string flag.
type stringList []string

func (l *stringList) String() string { return strings.Join(*l, ",") }

func (l *stringList) Set(s string) error {
	*l = append(*l, s)
	return nil
}

func runTLSCACreate(m *Meta, args []string) int {
	fset := m.flagSet("tls ca create", "[options]", `
Create a certificate authority (an ECDSA P-256 key and a self-signed
certificate) in the current directory: nomad-agent-ca.pem and
nomad-agent-ca-key.pem. Sign the agents' certificates with it (drover tls
cert create) and give every agent and CLI user the CA certificate
(tls.ca_file, NOMAD_CACERT). Keep the key offline: whoever has it can make
certificates the whole cluster trusts. Existing files are never
overwritten.`)
	days := fset.Int("days", tlsutil.DefaultCADays, "The number of days the CA is valid for.")
	cn := fset.String("common-name", "", `The CA's common name. Default: "Nomad Agent CA <serial>".`)
	domain := fset.String("domain", tlsutil.DefaultDomain, "The domain of the cluster: it names the files (<domain>-agent-ca.pem).")
	if code, done := m.parse(fset, args); done {
		return code
	}
	if fset.NArg() != 0 {
		return m.usageError(fset, "this command takes no arguments")
	}
	if *days <= 0 {
		return m.usageError(fset, "-days must be positive")
	}
	certFile, keyFile := tlsutil.CAFileNames(*domain)
	certPEM, keyPEM, err := tlsutil.GenerateCA(tlsutil.CAOptions{CommonName: *cn, Days: *days})
	if err != nil {
		fmt.Fprintf(m.stderr, "Error creating the CA: %v\n", err)
		return exitError
	}
	if err := writeNewFiles(map[string][]byte{certFile: certPEM}, map[string][]byte{keyFile: keyPEM}); err != nil {
		fmt.Fprintf(m.stderr, "Error: %v\n", err)
		return exitError
	}
	fmt.Fprintf(m.stdout, "==> CA certificate saved to: %s\n", certFile)
	fmt.Fprintf(m.stdout, "==> CA certificate key saved to: %s\n", keyFile)
	return exitOK
}

func runTLSCertCreate(m *Meta, args []string) int {
	fset := m.flagSet("tls cert create", "-server|-client|-cli [options]", `
Create a certificate signed by the CA (drover tls ca create) in the
current directory, with its key: <region>-server-nomad.pem for a server
(named server.<region>.nomad), <region>-client-nomad.pem for a client
(client.<region>.nomad), <region>-cli-nomad.pem for the CLI
(cli.<region>.nomad). localhost is always among the names, and 127.0.0.1
among the addresses of server and client certificates. Existing files are
never overwritten.`)
	server := fset.Bool("server", false, "Create a server certificate.")
	client := fset.Bool("client", false, "Create a client certificate.")
	cli := fset.Bool("cli", false, "Create a CLI certificate (client authentication only).")
	region := fset.String("region", tlsutil.DefaultRegion, "The region the certificate is for.")
	domain := fset.String("domain", tlsutil.DefaultDomain, "The cluster's domain: <role>.<region>.<domain>, and the default CA file names.")
	days := fset.Int("days", tlsutil.DefaultCertDays, "The number of days the certificate is valid for.")
	caFile := fset.String("ca", "", "The CA certificate. Default: <domain>-agent-ca.pem.")
	keyFile := fset.String("key", "", "The CA key. Default: <domain>-agent-ca-key.pem.")
	var dnsNames, ipAddrs stringList
	fset.Var(&dnsNames, "additional-dnsname", "Another DNS name for the certificate; repeatable.")
	fset.Var(&ipAddrs, "additional-ipaddress", "Another IP address for the certificate; repeatable.")
	if code, done := m.parse(fset, args); done {
		return code
	}
	if fset.NArg() != 0 {
		return m.usageError(fset, "this command takes no arguments")
	}
	var kinds []tlsutil.Kind
	for kind, on := range map[tlsutil.Kind]bool{tlsutil.KindServer: *server, tlsutil.KindClient: *client, tlsutil.KindCLI: *cli} {
		if on {
			kinds = append(kinds, kind)
		}
	}
	if len(kinds) != 1 {
		return m.usageError(fset, "give exactly one of -server, -client or -cli")
	}
	if *days <= 0 {
		return m.usageError(fset, "-days must be positive")
	}
	var ips []net.IP
	for _, s := range ipAddrs {
		ip := net.ParseIP(strings.TrimSpace(s))
		if ip == nil {
			return m.usageError(fset, fmt.Sprintf("-additional-ipaddress %q is not an IP address", s))
		}
		ips = append(ips, ip)
	}
	defCA, defKey := tlsutil.CAFileNames(*domain)
	caPath, caKeyPath := defCA, defKey
	if *caFile != "" {
		caPath = *caFile
	}
	if *keyFile != "" {
		caKeyPath = *keyFile
	}
	caPEM, err := os.ReadFile(caPath)
	if err != nil {
		fmt.Fprintf(m.stderr, "Error reading the CA: %v (create one with `drover tls ca create`, or give -ca)\n", err)
		return exitError
	}
	caKeyPEM, err := os.ReadFile(caKeyPath)
	if err != nil {
		fmt.Fprintf(m.stderr, "Error reading the CA key: %v (give -key)\n", err)
		return exitError
	}
	kind := kinds[0]
	certPEM, keyPEM, err := tlsutil.GenerateCert(tlsutil.CertOptions{Kind: kind, Region: *region, Domain: *domain,
		DNSNames: dnsNames, IPAddresses: ips, Days: *days, CACertPEM: caPEM, CAKeyPEM: caKeyPEM})
	if err != nil {
		fmt.Fprintf(m.stderr, "Error creating the certificate: %v\n", err)
		return exitError
	}
	certFile, certKeyFile := tlsutil.CertFileNames(*domain, *region, kind)
	if kind == tlsutil.KindServer {
		fmt.Fprintln(m.stdout, "==> WARNING: a server certificate lets its holder act as a server of the cluster")
		fmt.Fprintln(m.stdout, "    and read all of its state: install it on server hosts only, and keep it")
		fmt.Fprintln(m.stdout, "    as safe as the CA key.")
	}
	fmt.Fprintf(m.stdout, "==> Using CA file %s and CA key %s\n", caPath, caKeyPath)
	if err := writeNewFiles(map[string][]byte{certFile: certPEM}, map[string][]byte{certKeyFile: keyPEM}); err != nil {
		fmt.Fprintf(m.stderr, "Error: %v\n", err)
		return exitError
	}
	fmt.Fprintf(m.stdout, "==> %s certificate saved to: %s\n", kindTitle(kind), certFile)
	fmt.Fprintf(m.stdout, "==> %s certificate key saved to: %s\n", kindTitle(kind), certKeyFile)
	return exitOK
}

func kindTitle(k tlsutil.Kind) string {
	switch k {
	case tlsutil.KindServer:
		return "Server"
	case tlsutil.KindClient:
		return "Client"
	}
	return "CLI"
}

// writeNewFiles writes certificates (0644) and keys (0600), refusing to
// replace any existing file: nothing is written when one exists.
func writeNewFiles(certs, keys map[string][]byte) error {
	for _, m := range []map[string][]byte{certs, keys} {
		for name := range m {
			if _, err := os.Stat(name); err == nil {
				return fmt.Errorf("%s already exists: move it away or run the command in another directory", name)
			} else if !errors.Is(err, fs.ErrNotExist) {
				return err
			}
		}
	}
	for _, set := range []struct {
		files map[string][]byte
		mode  os.FileMode
	}{{certs, 0o644}, {keys, 0o600}} {
		for name, b := range set.files {
			f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, set.mode)
			if err != nil {
				return fmt.Errorf("write %s: %w", name, err)
			}
			_, werr := f.Write(b)
			if cerr := f.Close(); werr == nil {
				werr = cerr
			}
			if werr != nil {
				return fmt.Errorf("write %s: %w", name, werr)
			}
		}
	}
	return nil
}
