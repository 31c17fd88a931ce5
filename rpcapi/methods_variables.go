package rpcapi

import "github.com/drover-io/drover/structs"

// The methods of variables and of the keyring. Variables cross the wire
// in the clear (the server encrypts them at rest): the RPC port must be
// as trusted as the HTTP API that serves them.
var (
	// VarList lists variables' metadata.
	VarList = read[structs.VariablesListRequest, structs.VariablesListResponse]("VarList")
	// VarGet reads one variable, decrypted.
	VarGet = read[structs.VariablesReadRequest, structs.VariablesReadResponse]("VarGet")
	// VarApply writes or deletes a variable, with or without a
	// check-and-set index.
	VarApply = deduplicated[structs.VariablesApplyRequest, structs.VariablesApplyResponse]("VarApply")
	// KeyringList lists the root keys' metadata.
	KeyringList = read[structs.KeyringListRequest, structs.KeyringListResponse]("KeyringList")
	// KeyringRotate makes a new active root key (with Full, encrypting
	// every variable again with it).
	KeyringRotate = deduplicated[structs.KeyringRotateRequest, structs.KeyringRotateResponse]("KeyringRotate")
	// KeyringDelete removes an inactive root key.
	KeyringDelete = deduplicated[structs.KeyringDeleteRequest, structs.KeyringDeleteResponse]("KeyringDelete")
)

// KeyringPublicKeys lists the public keys of the root keys' signing keys:
// the cluster's JWKS.
var KeyringPublicKeys = read[structs.KeyringPublicKeysRequest, structs.KeyringPublicKeysResponse]("KeyringPublicKeys")
