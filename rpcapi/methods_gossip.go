package rpcapi

import "github.com/drover-io/drover/structs"

// The servers' gossip keyring, served by the server called (it asks
// every member of its pool).
var (
	// GossipKeyringList lists the gossip keys the pool's members hold.
	GossipKeyringList = served(read[structs.GossipKeyringListRequest, structs.GossipKeyringResponse]("GossipKeyringList"))
	// GossipKeyringOp installs, uses or removes a gossip key on every
	// member. Idempotent: doing it again changes nothing more.
	GossipKeyringOp = served(idempotent[structs.GossipKeyringRequest, structs.GossipKeyringResponse]("GossipKeyringOp"))

	// KEKHandoff hands the cluster's key-encryption key, encrypted to the
	// caller, to a server that joined without it. Only a server may call
	// it: one with a server certificate where the RPC port is TLS, one
	// that proves it holds the gossip key where it is not (checked by the
	// handler, whatever ACLs say). Served by the server called.
	KEKHandoff = served(read[structs.KEKHandoffRequest, structs.KEKHandoffResponse]("KEKHandoff"))
)

func gossipMethods() []*Info {
	return []*Info{GossipKeyringList.info, GossipKeyringOp.info, KEKHandoff.info}
}
