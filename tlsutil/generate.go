package tlsutil

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net"
	"time"
)

// Defaults of the certificates `drover tls` makes, as Nomad's.
const (
	DefaultDomain = "nomad"
	DefaultRegion = "global"
	// DefaultCADays is a CA's validity: 5 years.
	DefaultCADays = 5 * 365
	// DefaultCertDays is a certificate's validity: 1 year.
	DefaultCertDays = 365
)

// Kind is the role a certificate is made for.
type Kind string

// The kinds of certificates.
const (
	KindServer Kind = "server"
	KindClient Kind = "client"
	KindCLI    Kind = "cli"
)

// CAFileNames returns the file names of a CA of domain and of its key:
// nomad-agent-ca.pem and nomad-agent-ca-key.pem.
func CAFileNames(domain string) (cert, key string) {
	return domain + "-agent-ca.pem", domain + "-agent-ca-key.pem"
}

// CertFileNames returns the file names of a certificate of kind in region
// and of its key: global-server-nomad.pem and global-server-nomad-key.pem.
func CertFileNames(domain, region string, kind Kind) (cert, key string) {
	base := region + "-" + string(kind) + "-" + domain
	return base + ".pem", base + "-key.pem"
}

// CAOptions describe a CA to make.
type CAOptions struct {
	// CommonName defaults to "Nomad Agent CA <serial>".
	CommonName string
	// Days of validity; 0 is DefaultCADays.
	Days int
	// Now is when the validity starts; zero is time.Now().
	Now time.Time
}

// GenerateCA makes a self-signed CA with an ECDSA P-256 key and returns
// the PEM of its certificate and of its key.
func GenerateCA(o CAOptions) (certPEM, keyPEM []byte, err error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, fmt.Errorf("make the CA key: %w", err)
	}
	serial, err := newSerial()
	if err != nil {
		return nil, nil, err
	}
	cn := o.CommonName
	if cn == "" {
		cn = "Nomad Agent CA " + serial.String()
	}
	now := nowOr(o.Now)
	tmpl := &x509.Certificate{
		SerialNumber:          serial,
		Subject:               pkix.Name{CommonName: cn, Organization: []string{"Drover"}, OrganizationalUnit: []string{"Nomad"}},
		NotBefore:             now.Add(-time.Minute),
		NotAfter:              now.AddDate(0, 0, orDefault(o.Days, DefaultCADays)),
		IsCA:                  true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageCRLSign | x509.KeyUsageDigitalSignature,
		SubjectKeyId:          keyID(key.Public()),
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, key.Public(), key)
	if err != nil {
		return nil, nil, fmt.Errorf("make the CA certificate: %w", err)
	}
	keyPEM, err = encodeKey(key)
	if err != nil {
		return nil, nil, err
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), keyPEM, nil
}

// CertOptions describe a certificate to make.
type CertOptions struct {
	Kind Kind
	// Region and Domain name the certificate: server.<region>.<domain>;
	// empty: global and nomad.
	Region string
	Domain string
	// DNSNames and IPAddresses are added to the subject alternative
	// names (localhost, and for servers and clients 127.0.0.1, always
	// are).
	DNSNames    []string
	IPAddresses []net.IP
	// Days of validity; 0 is DefaultCertDays.
	Days int
	// CACertPEM and CAKeyPEM are the signing CA's.
	CACertPEM []byte
	CAKeyPEM  []byte
	// Now is when the validity starts; zero is time.Now().
	Now time.Time
}

// GenerateCert makes a certificate of o.Kind signed by the CA and returns
// the PEM of the certificate and of its key. Server and client
// certificates serve and call (server and client authentication); CLI
// certificates only call.
func GenerateCert(o CertOptions) (certPEM, keyPEM []byte, err error) {
	region, domain := orString(o.Region, DefaultRegion), orString(o.Domain, DefaultDomain)
	var usage []x509.ExtKeyUsage
	ips := []net.IP{net.ParseIP("127.0.0.1")}
	switch o.Kind {
	case KindServer, KindClient:
		usage = []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth}
	case KindCLI:
		usage = []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}
		ips = nil
	default:
		return nil, nil, fmt.Errorf("certificate kind %q: use server, client or cli", o.Kind)
	}
	ca, caKey, err := parseCA(o.CACertPEM, o.CAKeyPEM)
	if err != nil {
		return nil, nil, err
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, fmt.Errorf("make the key: %w", err)
	}
	serial, err := newSerial()
	if err != nil {
		return nil, nil, err
	}
	name := string(o.Kind) + "." + region + "." + domain
	now := nowOr(o.Now)
	notAfter := now.AddDate(0, 0, orDefault(o.Days, DefaultCertDays))
	if notAfter.After(ca.NotAfter) {
		return nil, nil, fmt.Errorf("the certificate would outlive its CA (valid until %s): give fewer -days or make a new CA",
			ca.NotAfter.UTC().Format(time.RFC3339))
	}
	tmpl := &x509.Certificate{
		SerialNumber:          serial,
		Subject:               pkix.Name{CommonName: name},
		NotBefore:             now.Add(-time.Minute),
		NotAfter:              notAfter,
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment,
		ExtKeyUsage:           usage,
		BasicConstraintsValid: true,
		DNSNames:              append([]string{name, "localhost"}, o.DNSNames...),
		IPAddresses:           append(ips, o.IPAddresses...),
		SubjectKeyId:          keyID(key.Public()),
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, key.Public(), caKey)
	if err != nil {
		return nil, nil, fmt.Errorf("sign the certificate: %w", err)
	}
	keyPEM, err = encodeKey(key)
	if err != nil {
		return nil, nil, err
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), keyPEM, nil
}

// parseCA reads a CA's certificate and key and checks that they belong
// together and can sign.
func parseCA(certPEM, keyPEM []byte) (*x509.Certificate, crypto.Signer, error) {
	pair, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		return nil, nil, fmt.Errorf("read the CA and its key: %w", err)
	}
	ca, err := x509.ParseCertificate(pair.Certificate[0])
	if err != nil {
		return nil, nil, fmt.Errorf("parse the CA certificate: %w", err)
	}
	if !ca.IsCA {
		return nil, nil, errors.New("the -ca certificate is not a CA (make one with drover tls ca create)")
	}
	signer, ok := pair.PrivateKey.(crypto.Signer)
	if !ok {
		return nil, nil, errors.New("the CA key cannot sign")
	}
	return ca, signer, nil
}

func encodeKey(key *ecdsa.PrivateKey) ([]byte, error) {
	der, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return nil, fmt.Errorf("encode the key: %w", err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: der}), nil
}

// newSerial returns a random 128-bit serial number.
func newSerial() (*big.Int, error) {
	n, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 128))
	if err != nil {
		return nil, fmt.Errorf("make a serial number: %w", err)
	}
	return n, nil
}

// keyID is a key's subject key identifier (a hash of the public key).
func keyID(pub crypto.PublicKey) []byte {
	der, err := x509.MarshalPKIXPublicKey(pub)
	if err != nil {
		return nil
	}
	sum := sha256.Sum256(der)
	return sum[:20]
}

func nowOr(t time.Time) time.Time {
	if t.IsZero() {
		return time.Now()
	}
	return t
}

func orDefault(v, def int) int {
	if v <= 0 {
		return def
	}
	return v
}

func orString(v, def string) string {
	if v == "" {
		return def
	}
	return v
}
