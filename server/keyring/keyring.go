package keyring

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/ed25519"
	"crypto/hkdf"
	"crypto/rand"
	"crypto/sha256"
	"fmt"
	"sync"
	"time"

	"github.com/drover-io/drover/structs"
)

// rootKeySize is the size of a root key's material: AES-256.
const rootKeySize = 32

// Keyring seals and opens data with root keys, which it unwraps with its
// KEK on first use and keeps, unwrapped, in memory. It is safe for
// concurrent use.
type Keyring struct {
	mu    sync.Mutex // guards the fields below
	kek   *KEK       // replaced once, by Adopt, while provisional
	cache map[string]*unwrapped
}

// unwrapped is what a Keyring keeps of a root key it unwrapped.
type unwrapped struct {
	aead cipher.AEAD
	// signer signs workload identities; its public key is published
	// in the cluster's JWKS.
	signer ed25519.PrivateKey
}

// New returns a keyring whose keys are wrapped with kek.
func New(kek *KEK) *Keyring {
	return &Keyring{kek: kek, cache: make(map[string]*unwrapped)}
}

// KEKID returns the ID of the keyring's KEK.
func (r *Keyring) KEKID() string {
	kek, _ := r.currentKEK()
	return kek.id
}

// currentKEK returns the keyring's KEK and whether it is provisional.
func (r *Keyring) currentKEK() (*KEK, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.kek, r.kek.provisional
}

// Provisional reports whether the keyring's KEK was made at this start
// and wraps no root key yet: the cluster's KEK may replace it (Adopt).
func (r *Keyring) Provisional() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.kek.provisional
}

// Adopt makes k (the cluster's KEK, handed over by a peer server) the
// keyring's, in place of its provisional one, and writes it where the
// provisional one would have been written. A keyring whose KEK is not
// provisional (read from its file, or wrapping a root key) keeps it: an
// error, unless k is the same KEK.
func (r *Keyring) Adopt(k *KEK) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.kek.id == k.id {
		return nil
	}
	if !r.kek.provisional {
		return fmt.Errorf("this server's key-encryption key %s (%s) is not provisional: it is not replaced by %s", r.kek.id, r.kek.source, k.id)
	}
	adopted := &KEK{aead: k.aead, material: k.material, id: k.id, source: r.kek.source, path: r.kek.path, provisional: true}
	if err := adopted.keep(); err != nil {
		return err
	}
	r.kek = adopted
	return nil
}

// NewRootKey returns a new root key (a random UUID and random material),
// wrapped with the KEK, in state active, created at now. Its indexes are
// set when it is committed.
func (r *Keyring) NewRootKey(now time.Time) (*structs.RootKey, error) {
	material := make([]byte, rootKeySize)
	if _, err := rand.Read(material); err != nil {
		return nil, fmt.Errorf("make root key: %w", err)
	}
	meta := structs.RootKeyMeta{
		KeyID:      structs.GenerateUUID(),
		Algorithm:  structs.AlgorithmAES256GCM,
		CreateTime: now.UnixNano(),
		State:      structs.RootKeyStateActive,
	}
	u, err := newUnwrapped(material)
	if err != nil {
		return nil, err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	// The KEK wraps a root key from now on: a provisional one is kept
	// (written to its file) first, and no other KEK replaces it.
	if err := r.kek.keep(); err != nil {
		return nil, err
	}
	wrapped := r.kek.seal(material, wrapAD(&meta))
	r.cache[meta.KeyID] = u
	return &structs.RootKey{RootKeyMeta: meta, KEKID: r.kek.id, WrappedKey: wrapped}, nil
}

// Seal encrypts plaintext with key, bound to ad: only Open with the same
// key and ad opens it.
func (r *Keyring) Seal(key *structs.RootKey, plaintext, ad []byte) ([]byte, error) {
	u, err := r.unwrap(key)
	if err != nil {
		return nil, err
	}
	return u.aead.Seal(nil, nil, plaintext, ad), nil
}

// Open decrypts what Seal returned for key and ad. Data sealed with
// another key or for other ad, or changed, is an error.
func (r *Keyring) Open(key *structs.RootKey, sealed, ad []byte) ([]byte, error) {
	u, err := r.unwrap(key)
	if err != nil {
		return nil, err
	}
	out, err := u.aead.Open(nil, nil, sealed, ad)
	if err != nil {
		return nil, fmt.Errorf("decrypt with root key %s: the data is damaged or was not encrypted for this record: %w", key.KeyID, err)
	}
	return out, nil
}

// Forget drops the unwrapped material of a key (removed from the
// keyring) from memory.
func (r *Keyring) Forget(keyID string) {
	r.mu.Lock()
	delete(r.cache, keyID)
	r.mu.Unlock()
}

// PublicKey returns the public half of the key that root key key's
// material derives for signing workload identities (Ed25519), which the
// cluster publishes in its JWKS.
func (r *Keyring) PublicKey(key *structs.RootKey) (ed25519.PublicKey, error) {
	u, err := r.unwrap(key)
	if err != nil {
		return nil, err
	}
	return u.signer.Public().(ed25519.PublicKey), nil
}

// Sign signs msg with the signing key that root key key's material
// derives (Ed25519): the signature of a workload identity.
func (r *Keyring) Sign(key *structs.RootKey, msg []byte) ([]byte, error) {
	u, err := r.unwrap(key)
	if err != nil {
		return nil, err
	}
	return ed25519.Sign(u.signer, msg), nil
}

// unwrap returns what the keyring keeps of key, unwrapping it on first
// use.
func (r *Keyring) unwrap(key *structs.RootKey) (*unwrapped, error) {
	if key == nil {
		return nil, fmt.Errorf("no root key")
	}
	r.mu.Lock()
	u, ok := r.cache[key.KeyID]
	r.mu.Unlock()
	if ok {
		return u, nil
	}
	if key.Algorithm != structs.AlgorithmAES256GCM {
		return nil, fmt.Errorf("root key %s uses algorithm %q: only %q is supported", key.KeyID, key.Algorithm, structs.AlgorithmAES256GCM)
	}
	kek, provisional := r.currentKEK()
	if key.KEKID != kek.id {
		if provisional {
			return nil, structs.NewError(structs.KindUnavailable,
				"root key %s was wrapped with key-encryption key %s, which this server has not received yet from another server "+
					"(it asks them once it joined; see its log), or copy keyring.kek from the data_dir/server of a server "+
					"that has it and restart this server", key.KeyID, key.KEKID)
		}
		return nil, structs.NewError(structs.KindInternal,
			"root key %s was wrapped with key-encryption key %s, but this server's is %s (%s): "+
				"every server of a cluster needs the same one; copy keyring.kek from the data_dir/server of a server "+
				"that has it and restart this server", key.KeyID, key.KEKID, kek.id, kek.source)
	}
	material, err := kek.open(key.WrappedKey, wrapAD(&key.RootKeyMeta))
	if err != nil {
		return nil, fmt.Errorf("unwrap root key %s: %w", key.KeyID, err)
	}
	if len(material) != rootKeySize {
		return nil, fmt.Errorf("unwrap root key %s: it holds %d bytes, not %d", key.KeyID, len(material), rootKeySize)
	}
	u, err = newUnwrapped(material)
	if err != nil {
		return nil, err
	}
	r.mu.Lock()
	r.cache[key.KeyID] = u
	r.mu.Unlock()
	return u, nil
}

// signingKeyInfo separates the signing key derived from a root key's
// material from its use as an encryption key.
const signingKeyInfo = "drover workload identity signing key"

// newUnwrapped returns the cipher and signing key of a root key's
// material.
func newUnwrapped(material []byte) (*unwrapped, error) {
	aead, err := newAEAD(material)
	if err != nil {
		return nil, err
	}
	seed, err := hkdf.Key(sha256.New, material, nil, signingKeyInfo, ed25519.SeedSize)
	if err != nil {
		return nil, fmt.Errorf("derive signing key: %w", err)
	}
	return &unwrapped{aead: aead, signer: ed25519.NewKeyFromSeed(seed)}, nil
}

// wrapAD binds a wrapped key to its ID and algorithm.
func wrapAD(m *structs.RootKeyMeta) []byte {
	return []byte("drover-root-key\x00" + m.KeyID + "\x00" + m.Algorithm)
}

// newAEAD returns AES-256-GCM with a random nonce, prepended to the
// ciphertext.
func newAEAD(key []byte) (cipher.AEAD, error) {
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, fmt.Errorf("make cipher: %w", err)
	}
	aead, err := cipher.NewGCMWithRandomNonce(block)
	if err != nil {
		return nil, fmt.Errorf("make cipher: %w", err)
	}
	return aead, nil
}
