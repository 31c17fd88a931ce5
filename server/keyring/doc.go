// Package keyring holds the servers' root keys in the clear, in memory
// only, and seals and opens what they encrypt: the items of variables now,
// workload identities' signatures later.
//
// Where it sits in the data flow: a root key is made by the server that
// handles a rotation (or, for the first key, by the leader when it takes
// office), wrapped here with the key-encryption key (KEK) and committed
// through raft as a structs.RootKey, so every server holds every key, but
// only wrapped. A variable write is sealed by the server that serves it,
// with the active key, before the variable is proposed to raft: the state
// store, the raft log and snapshots hold ciphertext only
// (structs.VariableEncrypted). A read opens it on the server that serves
// it. A Keyring caches the keys it unwrapped.
//
// The KEK never enters the replicated state. It is 32 random bytes in
// <data_dir>/server/keyring.kek (mode 0600). A server without the file
// starts with a provisional KEK (LoadKEK; GenerateProvisionalKEK in
// memory), written to the file when it wraps the cluster's first root key,
// or replaced (Adopt) by the cluster's KEK that a peer server hands over
// (handoff.go: encrypted to the requester, authenticated by the servers'
// gossip key where there is one). A copy of the raft data without that
// file (a snapshot saved with `operator snapshot save`, a backup of
// server/raft) discloses no variable. Every server of a cluster needs the
// same KEK: a server that has another one (read from its file) fails to
// unwrap the keys with an error that names both KEK IDs and says which
// file to copy. See docs/security.md, "Variables and the keyring".
//
// Sealing is AES-256-GCM with a random nonce; the key material is wrapped
// the same way with the KEK, bound (as additional data) to the key's ID,
// and a variable's ciphertext is bound to its namespace and path
// (structs.VariableAdditionalData), so that neither can be moved to
// another record of the state and still open.
package keyring
