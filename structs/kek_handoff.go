package structs

// KEKHandoffRequest asks a peer server for the cluster's key-encryption
// key (KEK): what a server that joined without one sends (server
// package, kek_handoff.go). Nothing in it is secret: RequesterKey is an
// ephemeral X25519 public key the answer is encrypted to, and MAC proves
// that the caller holds the servers' shared secret (the gossip key).
type KEKHandoffRequest struct {
	// KEKID is the ID of the KEK asked for: the one that wraps the root
	// keys in the replicated state.
	KEKID string
	// RequesterKey is the caller's ephemeral X25519 public key.
	RequesterKey []byte
	// Nonce is 32 random bytes, fresh for each request.
	Nonce []byte
	// MAC is HMAC-SHA256 of the fields above, keyed by a key derived from
	// the gossip key; empty where the servers have none (TLS alone then
	// authenticates the caller).
	MAC []byte
	QueryOptions
}

// KEKHandoffResponse carries the KEK, encrypted to the requester:
// AES-256-GCM under a key derived from an X25519 exchange between
// RequesterKey and ResponderKey and from the gossip key.
type KEKHandoffResponse struct {
	// ResponderKey is the answering server's ephemeral X25519 public key.
	ResponderKey []byte
	// Sealed is the KEK's material, encrypted and authenticated.
	Sealed []byte
	QueryMeta
}
