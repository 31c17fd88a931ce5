package structs

// The keyring's root keys encrypt variables (and will sign workload
// identities). The replicated state holds each key wrapped with the
// servers' key-encryption key (package server/keyring): RootKey. The API
// shows only their metadata: RootKeyMeta.

// AlgorithmAES256GCM is the one encryption algorithm of root keys, named
// as Nomad's.
const AlgorithmAES256GCM = "aes256-gcm"

// Root key states, as Nomad's.
const (
	// RootKeyStateActive is the key new writes are encrypted with; there
	// is at most one.
	RootKeyStateActive = "active"
	// RootKeyStateInactive is a former active key: it still decrypts
	// what was encrypted with it.
	RootKeyStateInactive = "inactive"
)

// RootKeyMeta describes a root key, without its material.
type RootKeyMeta struct {
	// KeyID is a UUID.
	KeyID     string
	Algorithm string
	// CreateTime is Unix nanoseconds.
	CreateTime  int64
	CreateIndex uint64
	ModifyIndex uint64
	State       string
	// PublishTime is when the key starts signing (Nomad's prepublished
	// keys); 0: Drover publishes keys at once.
	PublishTime int64
}

// RootKey is a root key as the state store keeps it: its metadata and its
// material wrapped (sealed) with the key-encryption key KEKID.
type RootKey struct {
	RootKeyMeta
	// KEKID names the key-encryption key that wrapped the material.
	KEKID      string
	WrappedKey []byte
}

// Meta returns a copy of the key's metadata.
func (k *RootKey) Meta() *RootKeyMeta {
	m := k.RootKeyMeta
	return &m
}

// Copy returns a copy of k; nil for nil.
func (k *RootKey) Copy() *RootKey {
	if k == nil {
		return nil
	}
	c := *k
	c.WrappedKey = append([]byte(nil), k.WrappedKey...)
	return &c
}

// KeyringListRequest lists the root keys.
type KeyringListRequest struct {
	QueryOptions
}

// KeyringListResponse lists the root keys' metadata, oldest first.
type KeyringListResponse struct {
	Keys []*RootKeyMeta
	QueryMeta
}

// KeyringRotateRequest makes a new active root key. With Full, every
// variable is then encrypted again with it (otherwise only new writes
// are).
type KeyringRotateRequest struct {
	// Algorithm is the new key's; empty means AlgorithmAES256GCM, the
	// only one.
	Algorithm string
	Full      bool
	WriteRequest
}

// KeyringRotateResponse returns the new key and, with Full, how many
// variables were encrypted again. Key is the metadata as proposed, its
// CreateIndex and ModifyIndex 0 as in Nomad's answer; Index is the
// write's (the listed key's CreateIndex).
type KeyringRotateResponse struct {
	Key     *RootKeyMeta
	Rekeyed int
	WriteMeta
}

// KeyringDeleteRequest removes an inactive root key. A key that variables
// are still encrypted with is removed only with Force, which makes them
// unreadable.
type KeyringDeleteRequest struct {
	KeyID string
	Force bool
	WriteRequest
}

// KeyringDeleteResponse answers a key removal.
type KeyringDeleteResponse struct {
	WriteMeta
}

// KeyringPublicKeysRequest lists the public keys that verify workload
// identities.
type KeyringPublicKeysRequest struct {
	QueryOptions
}

// KeyringPublicKey is the public half of the signing key a root key
// derives: an Ed25519 key (JWK "OKP", curve "Ed25519", alg "EdDSA").
type KeyringPublicKey struct {
	KeyID     string
	PublicKey []byte
	// CreateTime is the root key's, Unix nanoseconds.
	CreateTime int64
}

// KeyringPublicKeysResponse lists the public keys of every root key.
type KeyringPublicKeysResponse struct {
	PublicKeys []*KeyringPublicKey
	QueryMeta
}
