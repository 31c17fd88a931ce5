package structs

// The operations on the servers' gossip keyring.
const (
	GossipKeyringInstall = "install"
	GossipKeyringUse     = "use"
	GossipKeyringRemove  = "remove"
)

// GossipKeyringListRequest lists the gossip encryption keys of the
// servers' gossip pool.
type GossipKeyringListRequest struct {
	QueryOptions
}

// GossipKeyringRequest installs, uses (makes primary) or removes a gossip
// encryption key on every server of the pool.
type GossipKeyringRequest struct {
	// Op is GossipKeyringInstall, GossipKeyringUse or GossipKeyringRemove.
	Op string
	// Key is base64 of 16, 24 or 32 bytes.
	Key string
	WriteRequest
}

// GossipKeyringResponse is what the pool's members answered: per key, how
// many hold it; per member that failed, why.
type GossipKeyringResponse struct {
	Messages    map[string]string
	Keys        map[string]int
	PrimaryKeys map[string]int
	NumNodes    int
	NumErr      int
	WriteMeta
}
