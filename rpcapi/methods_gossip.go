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
)

func gossipMethods() []*Info {
	return []*Info{GossipKeyringList.info, GossipKeyringOp.info}
}
