package rpcapi

import "github.com/drover-io/drover/structs"

// The ACL methods: bootstrap, policies, tokens, roles, and the resolution
// of a token to what it grants (an agent's HTTP API checks requests so).
var (
	// ACLBootstrap creates the first management token, once (or again
	// with the reset index). At most once: a repeat is refused.
	ACLBootstrap = atMostOnce[structs.ACLBootstrapRequest, structs.ACLTokenResponse]("ACLBootstrap")
	// ACLResolveToken returns a secret's token and its policies.
	ACLResolveToken = read[structs.ACLResolveRequest, structs.ACLResolveResponse]("ACLResolveToken")
	// ACLTokenSelf reads the caller's own token.
	ACLTokenSelf = read[structs.ACLTokenSpecificRequest, structs.SingleACLTokenResponse]("ACLTokenSelf")
	// ACLPolicyUpsert creates or updates policies.
	ACLPolicyUpsert = deduplicated[structs.ACLPolicyUpsertRequest, structs.ACLWriteResponse]("ACLPolicyUpsert")
	// ACLPolicyDelete deletes policies.
	ACLPolicyDelete = deduplicated[structs.ACLPolicyDeleteRequest, structs.ACLWriteResponse]("ACLPolicyDelete")
	// ACLPolicyList lists policies.
	ACLPolicyList = read[structs.ACLPolicyListRequest, structs.ACLPolicyListResponse]("ACLPolicyList")
	// ACLPolicyGet reads one policy.
	ACLPolicyGet = read[structs.ACLPolicySpecificRequest, structs.SingleACLPolicyResponse]("ACLPolicyGet")
	// ACLTokenUpsert creates or updates a token.
	ACLTokenUpsert = deduplicated[structs.ACLTokenUpsertRequest, structs.ACLTokenResponse]("ACLTokenUpsert")
	// ACLTokenDelete deletes tokens.
	ACLTokenDelete = deduplicated[structs.ACLTokenDeleteRequest, structs.ACLWriteResponse]("ACLTokenDelete")
	// ACLTokenList lists tokens (without their secrets).
	ACLTokenList = read[structs.ACLTokenListRequest, structs.ACLTokenListResponse]("ACLTokenList")
	// ACLTokenGet reads one token by accessor ID.
	ACLTokenGet = read[structs.ACLTokenSpecificRequest, structs.SingleACLTokenResponse]("ACLTokenGet")
	// ACLRoleUpsert creates or updates a role.
	ACLRoleUpsert = deduplicated[structs.ACLRoleUpsertRequest, structs.ACLRoleResponse]("ACLRoleUpsert")
	// ACLRoleDelete deletes roles.
	ACLRoleDelete = deduplicated[structs.ACLRoleDeleteRequest, structs.ACLWriteResponse]("ACLRoleDelete")
	// ACLRoleList lists roles.
	ACLRoleList = read[structs.ACLRoleListRequest, structs.ACLRoleListResponse]("ACLRoleList")
	// ACLRoleGet reads one role by ID or name.
	ACLRoleGet = read[structs.ACLRoleSpecificRequest, structs.SingleACLRoleResponse]("ACLRoleGet")
)

func aclMethods() []*Info {
	return []*Info{
		ACLBootstrap.info, ACLResolveToken.info, ACLTokenSelf.info, ACLPolicyUpsert.info, ACLPolicyDelete.info,
		ACLPolicyList.info, ACLPolicyGet.info, ACLTokenUpsert.info, ACLTokenDelete.info, ACLTokenList.info,
		ACLTokenGet.info, ACLRoleUpsert.info, ACLRoleDelete.info, ACLRoleList.info, ACLRoleGet.info,
	}
}
