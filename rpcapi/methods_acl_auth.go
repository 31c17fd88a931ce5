package rpcapi

import "github.com/drover-io/drover/structs"

// The login methods: auth methods, binding rules, logins, one-time
// tokens, the policies of one's own token and client introduction tokens.
var (
	// ACLAuthMethodUpsert creates or updates auth methods.
	ACLAuthMethodUpsert = deduplicated[structs.ACLAuthMethodUpsertRequest, structs.ACLAuthMethodUpsertResponse]("ACLAuthMethodUpsert")
	// ACLAuthMethodDelete deletes auth methods and their binding rules.
	ACLAuthMethodDelete = deduplicated[structs.ACLAuthMethodDeleteRequest, structs.ACLWriteResponse]("ACLAuthMethodDelete")
	// ACLAuthMethodList lists auth methods.
	ACLAuthMethodList = read[structs.ACLAuthMethodListRequest, structs.ACLAuthMethodListResponse]("ACLAuthMethodList")
	// ACLAuthMethodGet reads one auth method.
	ACLAuthMethodGet = read[structs.ACLAuthMethodGetRequest, structs.ACLAuthMethodGetResponse]("ACLAuthMethodGet")
	// ACLBindingRuleUpsert creates or updates binding rules.
	ACLBindingRuleUpsert = deduplicated[structs.ACLBindingRuleUpsertRequest, structs.ACLBindingRuleUpsertResponse]("ACLBindingRuleUpsert")
	// ACLBindingRuleDelete deletes binding rules.
	ACLBindingRuleDelete = deduplicated[structs.ACLBindingRuleDeleteRequest, structs.ACLWriteResponse]("ACLBindingRuleDelete")
	// ACLBindingRuleList lists binding rules.
	ACLBindingRuleList = read[structs.ACLBindingRuleListRequest, structs.ACLBindingRuleListResponse]("ACLBindingRuleList")
	// ACLBindingRuleGet reads one binding rule.
	ACLBindingRuleGet = read[structs.ACLBindingRuleGetRequest, structs.ACLBindingRuleGetResponse]("ACLBindingRuleGet")
	// ACLLogin exchanges an identity provider's credential for a new
	// token. At most once: each call makes a token.
	ACLLogin = atMostOnce[structs.ACLLoginRequest, structs.ACLTokenResponse]("ACLLogin")
	// OneTimeTokenUpsert makes a one-time token for the caller's token.
	OneTimeTokenUpsert = atMostOnce[structs.OneTimeTokenUpsertRequest, structs.OneTimeTokenUpsertResponse]("OneTimeTokenUpsert")
	// OneTimeTokenExchange exchanges a one-time token for its token,
	// once.
	OneTimeTokenExchange = atMostOnce[structs.OneTimeTokenExchangeRequest, structs.ACLTokenResponse]("OneTimeTokenExchange")
	// ACLPolicySelf lists the policies the caller's token holds.
	ACLPolicySelf = read[structs.ACLPolicySelfRequest, structs.ACLPolicyListResponse]("ACLPolicySelf")
	// ClientIntroductionToken signs a JWT introducing a new client node.
	// Idempotent: a repeat signs another token and changes no state.
	ClientIntroductionToken = idempotent[structs.ClientIntroductionTokenRequest, structs.ClientIntroductionTokenResponse]("ClientIntroductionToken")
)

func aclAuthMethods() []*Info {
	return []*Info{
		ACLAuthMethodUpsert.info, ACLAuthMethodDelete.info, ACLAuthMethodList.info, ACLAuthMethodGet.info,
		ACLBindingRuleUpsert.info, ACLBindingRuleDelete.info, ACLBindingRuleList.info, ACLBindingRuleGet.info,
		ACLLogin.info, OneTimeTokenUpsert.info, OneTimeTokenExchange.info, ACLPolicySelf.info, ClientIntroductionToken.info,
	}
}
