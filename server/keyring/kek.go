package keyring

import (
	"bytes"
	"crypto/cipher"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// kekSize is the size of a KEK: AES-256.
const kekSize = 32

// KEKFileName is the name of the KEK's file in a server's data directory
// (<data_dir>/server/keyring.kek).
const KEKFileName = "keyring.kek"

// KEK is a key-encryption key: it wraps the root keys that the replicated
// state holds. It never enters the replicated state.
type KEK struct {
	aead     cipher.AEAD
	material []byte
	id       string
	// source says where the KEK came from (its file, or "in memory"),
	// for errors.
	source string
	// path is the file a provisional KEK is written to once it is kept
	// (Keyring.NewRootKey, Keyring.Adopt); "" for one kept in memory.
	path string
	// provisional: made at this start and wrapping nothing yet, so that
	// the cluster's KEK, received from a peer server, may replace it.
	provisional bool
}

// NewKEK returns the KEK of material (32 bytes); source says where it
// came from, for errors.
func NewKEK(material []byte, source string) (*KEK, error) {
	if len(material) != kekSize {
		return nil, fmt.Errorf("key-encryption key from %s is %d bytes: it must be %d", source, len(material), kekSize)
	}
	aead, err := newAEAD(material)
	if err != nil {
		return nil, err
	}
	sum := sha256.Sum256(append([]byte("drover-kek-id\x00"), material...))
	return &KEK{aead: aead, material: bytes.Clone(material), id: hex.EncodeToString(sum[:8]), source: source}, nil
}

// GenerateKEK returns a new random KEK kept in memory only: for a dev or
// in-memory server, whose state is lost with it.
func GenerateKEK() (*KEK, error) {
	material := make([]byte, kekSize)
	if _, err := rand.Read(material); err != nil {
		return nil, fmt.Errorf("make key-encryption key: %w", err)
	}
	return NewKEK(material, "in memory")
}

// GenerateProvisionalKEK returns a new random KEK kept in memory, which
// a peer server's KEK may replace until it wraps a root key: what a
// server given no KEK starts with.
func GenerateProvisionalKEK() (*KEK, error) {
	k, err := GenerateKEK()
	if err != nil {
		return nil, err
	}
	k.provisional = true
	return k, nil
}

// ID returns the KEK's public fingerprint: 16 hex digits of a hash of its
// material, which tell two KEKs apart and disclose nothing of them.
func (k *KEK) ID() string { return k.id }

func (k *KEK) seal(plaintext, ad []byte) []byte {
	return k.aead.Seal(nil, nil, plaintext, ad)
}

func (k *KEK) open(sealed, ad []byte) ([]byte, error) {
	out, err := k.aead.Open(nil, nil, sealed, ad)
	if err != nil {
		return nil, fmt.Errorf("the wrapped key is damaged or not wrapped with key-encryption key %s: %w", k.id, err)
	}
	return out, nil
}

// LoadKEK reads the KEK from path (its material in base64 on one line).
// When the file does not exist it returns a random provisional KEK bound
// to path: written there (mode 0600, whole or not at all) when it wraps
// the cluster's first root key, or replaced by the cluster's KEK that a
// peer server hands over, and written then. A file that others may read,
// or that does not hold a KEK, is an error saying what to do.
func LoadKEK(path string) (*KEK, error) {
	b, err := os.ReadFile(path)
	switch {
	case err == nil:
		return parseKEKFile(path, b)
	case !errors.Is(err, fs.ErrNotExist):
		return nil, fmt.Errorf("read key-encryption key: %w", err)
	}
	material := make([]byte, kekSize)
	if _, err := rand.Read(material); err != nil {
		return nil, fmt.Errorf("make key-encryption key: %w", err)
	}
	k, err := NewKEK(material, path)
	if err != nil {
		return nil, err
	}
	k.path, k.provisional = path, true
	return k, nil
}

// keep writes a provisional KEK to its file (nothing for one kept in
// memory) and makes it final: from then on no other replaces it.
func (k *KEK) keep() error {
	if !k.provisional {
		return nil
	}
	if k.path != "" {
		if err := writeFileAtomic(k.path, []byte(base64.StdEncoding.EncodeToString(k.material)+"\n")); err != nil {
			return fmt.Errorf("write key-encryption key %s: %w", k.path, err)
		}
	}
	k.provisional = false
	return nil
}

func parseKEKFile(path string, b []byte) (*KEK, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("read key-encryption key: %w", err)
	}
	if fi.Mode().Perm()&0o077 != 0 {
		return nil, fmt.Errorf("key-encryption key %s has mode %s: others may read it; run chmod 600 %s", path, fi.Mode().Perm(), path)
	}
	material, err := base64.StdEncoding.DecodeString(strings.TrimSpace(string(b)))
	if err != nil {
		return nil, fmt.Errorf("key-encryption key %s is not base64: %v; restore it from a backup or from another server of the cluster", path, err)
	}
	return NewKEK(material, path)
}

// writeFileAtomic writes data to path through a synced temporary file
// renamed into place, then syncs the directory.
func writeFileAtomic(path string, data []byte) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	defer func() { _ = os.Remove(tmp) }()
	if err := f.Chmod(0o600); err != nil {
		_ = f.Close()
		return err
	}
	if _, err := f.Write(data); err != nil {
		_ = f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		_ = f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		return err
	}
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}
