package rpcapi

import (
	"context"
	"reflect"

	"github.com/drover-io/drover/acl"
)

// TokenHeader carries a call's ACL token over the wire (the caller's
// X-Nomad-Token, forwarded by an agent or a server).
const TokenHeader = "X-Nomad-Token"

// Shorthands of the requirements below.
var (
	nsRead   = acl.Namespace(acl.NamespaceCapabilityReadJob)
	nsList   = acl.Namespace(acl.NamespaceCapabilityListJobs)
	nsSubmit = acl.Namespace(acl.NamespaceCapabilitySubmitJob)
)

// requirements is what each method's caller must be granted, checked by
// the server in one place (its middleware) for every call that arrives
// over the wire. Every method of All has one (acl_test.go).
var requirements = map[*Info]acl.Requirement{
	// The client's methods: the node secret, checked by their handlers.
	NodeRegister.info:        acl.NodeSecret(),
	NodeUpdateStatus.info:    acl.NodeSecret(),
	NodeGetClientAllocs.info: acl.NodeSecret(),
	AllocGetAllocs.info:      acl.NodeSecret(),
	NodeUpdateAlloc.info:     acl.NodeSecret(),
	AllocRestartLease.info:   acl.NodeSecret(),
	NodeGet.info:             acl.NodeRead(),

	JobRegister.info:           nsSubmit,
	JobEvaluate.info:           nsSubmit,
	JobDeregister.info:         nsSubmit,
	JobGet.info:                nsRead,
	JobList.info:               nsList,
	JobAllocations.info:        nsRead,
	JobEvaluations.info:        nsRead,
	JobSummary.info:            nsRead,
	JobVersions.info:           nsRead,
	JobRevert.info:             nsSubmit,
	JobPlan.info:               nsSubmit,
	JobValidate.info:           acl.Namespace(acl.NamespaceCapabilityParseJob),
	AllocList.info:             nsRead,
	AllocGet.info:              nsRead,
	AllocTimeline.info:         nsRead,
	AllocNode.info:             nsRead,
	AllocStop.info:             acl.Namespace(acl.NamespaceCapabilityAllocLifecycle),
	EvalList.info:              nsRead,
	EvalGet.info:               nsRead,
	EvalAllocations.info:       nsRead,
	NodeList.info:              acl.NodeRead(),
	NodePoolList.info:          acl.NodeRead(),
	NodePoolGet.info:           acl.NodeRead(),
	NodePoolUpsert.info:        acl.Management(),
	NodePoolDelete.info:        acl.Management(),
	JobPeriodicForce.info:      nsSubmit,
	JobDispatch.info:           acl.Namespace(acl.NamespaceCapabilityDispatchJob),
	NodeAllocations.info:       acl.NodeRead(),
	DeploymentList.info:        nsRead,
	DeploymentGet.info:         nsRead,
	DeploymentAllocations.info: nsRead,
	DeploymentFail.info:        nsSubmit,
	DeploymentPromote.info:     nsSubmit,
	DeploymentPause.info:       nsSubmit,
	SchedulerGetConfig.info:    acl.OperatorRead(),
	SchedulerSetConfig.info:    acl.OperatorWrite(),
	NamespaceList.info:         acl.AnyToken(), // filtered to the namespaces the token may use
	NamespaceGet.info:          acl.AnyToken(),
	NamespaceUpsert.info:       acl.Management(),
	NamespaceDelete.info:       acl.Management(),

	VarList.info:           acl.Variable(acl.VariablesCapabilityList),
	VarGet.info:            acl.Variable(acl.VariablesCapabilityRead),
	VarApply.info:          acl.Variable(acl.VariablesCapabilityWrite),
	KeyringList.info:       acl.OperatorRead(),
	KeyringRotate.info:     acl.OperatorWrite(),
	KeyringDelete.info:     acl.OperatorWrite(),
	KeyringPublicKeys.info: acl.Public(),

	ServerMembers.info:        acl.AgentRead(),
	ServerJoin.info:           acl.AgentWrite(),
	ServerForceLeave.info:     acl.OperatorWrite(),
	StatusServers.info:        acl.Public(),
	ClusterStatus.info:        acl.Public(), // servers ask each other before a cluster (and its secret) exists
	RaftGetConfiguration.info: acl.OperatorRead(),
	RaftRemovePeer.info:       acl.OperatorWrite(),
	AutopilotGetConfig.info:   acl.OperatorRead(),
	AutopilotSetConfig.info:   acl.OperatorWrite(),
	AutopilotHealth.info:      acl.OperatorRead(),
	SnapshotSave.info:         acl.Management(),
	SnapshotRestore.info:      acl.Management(),
	EvalDequeue.info:          acl.Server(),
	EvalAck.info:              acl.Server(),
	PlanSubmit.info:           acl.Server(),

	ServiceRegistrationUpsert.info: acl.NodeSecret(),
	ServiceRegistrationDelete.info: acl.NodeSecret(),
	ServiceRegistrationList.info:   nsRead,
	ServiceRegistrationGet.info:    nsRead,

	JobScale.info:          acl.Namespace(acl.NamespaceCapabilityScaleJob),
	JobScaleStatus.info:    acl.Namespace(acl.NamespaceCapabilityReadJobScaling),
	ScalingPolicyList.info: acl.Namespace(acl.NamespaceCapabilityListScalingPolicies),
	ScalingPolicyGet.info:  acl.Namespace(acl.NamespaceCapabilityReadScalingPolicy),
	JobTagVersion.info:     nsSubmit,

	NodeUpdateDrain.info:          acl.NodeWrite(),
	NodeUpdateEligibility.info:    acl.NodeWrite(),
	NodeEvaluate.info:             acl.NodeWrite(),
	NodePurge.info:                acl.NodeWrite(),
	EvalDelete.info:               acl.Management(),
	Search.info:                   acl.AnyToken(), // the HTTP API keeps what the token may read
	JobGetSubmission.info:         nsRead,
	SystemGC.info:                 acl.Management(),
	SystemReconcileSummaries.info: acl.Management(),

	AllocSignIdentities.info: acl.NodeSecret(),
	NodeSignIdentity.info:    acl.NodeSecret(),
	IdentityAuthorize.info:   acl.Public(), // the workload's signed token is the credential, verified by the handler

	ACLBootstrap.info:    acl.Public(),
	ACLResolveToken.info: acl.Public(), // the secret is the credential; failures are rate-limited
	ACLTokenSelf.info:    acl.AnyToken(),
	ACLPolicyUpsert.info: acl.Management(),
	ACLPolicyDelete.info: acl.Management(),
	ACLPolicyList.info:   acl.Management(),
	ACLPolicyGet.info:    acl.AnyToken(), // management, or a token holding the policy (checked by the handler)
	ACLTokenUpsert.info:  acl.Management(),
	ACLTokenDelete.info:  acl.Management(),
	ACLTokenList.info:    acl.Management(),
	ACLTokenGet.info:     acl.Management(),
	ACLRoleUpsert.info:   acl.Management(),
	ACLRoleDelete.info:   acl.Management(),
	ACLRoleList.info:     acl.Management(),
	ACLRoleGet.info:      acl.AnyToken(), // management, or a token holding the role (checked by the handler)

	ACLAuthMethodUpsert.info:     acl.Management(),
	ACLAuthMethodDelete.info:     acl.Management(),
	ACLAuthMethodList.info:       acl.Public(), // acl login lists them before the caller has a token, as Nomad's
	ACLAuthMethodGet.info:        acl.Management(),
	ACLBindingRuleUpsert.info:    acl.Management(),
	ACLBindingRuleDelete.info:    acl.Management(),
	ACLBindingRuleList.info:      acl.Management(),
	ACLBindingRuleGet.info:       acl.Management(),
	ACLLogin.info:                acl.Public(), // the identity provider's credential is verified by the handler
	OneTimeTokenUpsert.info:      acl.AnyToken(),
	OneTimeTokenExchange.info:    acl.Public(), // the one-time secret is the credential
	ACLPolicySelf.info:           acl.AnyToken(),
	ClientIntroductionToken.info: acl.NodeWrite(),

	GossipKeyringList.info: acl.AgentRead(),
	GossipKeyringOp.info:   acl.AgentWrite(),
	// Servers only: the servers' ACL secret where ACLs are on; the
	// handler also requires a server certificate (TLS) or proof of the
	// gossip key, with ACLs or without.
	KEKHandoff.info: acl.Server(),
}

// Requirement returns what a caller of the method must be granted; the
// zero Requirement (refused) for a method that declares none.
func (i *Info) Requirement() acl.Requirement { return requirements[i] }

// authTokenKey is the context key of WithAuthToken.
type authTokenKey struct{}

// WithAuthToken returns ctx carrying the caller's ACL token (its secret
// ID): a Transport sends it (TokenHeader), and the receiving server finds
// it in its context (AuthToken).
func WithAuthToken(ctx context.Context, secret string) context.Context {
	return context.WithValue(ctx, authTokenKey{}, secret)
}

// AuthToken returns the ACL token ctx carries, "" for none.
func AuthToken(ctx context.Context) string {
	v, _ := ctx.Value(authTokenKey{}).(string)
	return v
}

// HasAuthToken reports whether ctx carries a caller's token, even an
// empty one (an anonymous request that the HTTP API checked), as opposed
// to none at all (a call a server makes of itself).
func HasAuthToken(ctx context.Context) bool {
	_, ok := ctx.Value(authTokenKey{}).(string)
	return ok
}

// remoteKey is the context key of a call that arrived over the wire.
type remoteKey struct{}

// withRemote marks a call as received over the wire.
func withRemote(ctx context.Context) context.Context {
	return context.WithValue(ctx, remoteKey{}, true)
}

// Remote reports whether the call arrived over the wire (the RPC port),
// rather than from the same process (whose HTTP API checked it).
func Remote(ctx context.Context) bool {
	v, _ := ctx.Value(remoteKey{}).(bool)
	return v
}

// Target returns what a request names for an ACL check: its namespace
// (from its Namespace field, its query options, or the job or variable it
// carries; "default" when none) and a variable's path.
func Target(req any) acl.Target {
	t := acl.Target{}
	v := reflect.ValueOf(req)
	for v.Kind() == reflect.Pointer {
		if v.IsNil() {
			return acl.Target{Namespace: "default"}
		}
		v = v.Elem()
	}
	if v.Kind() != reflect.Struct {
		return acl.Target{Namespace: "default"}
	}
	t.Namespace = stringField(v, "Namespace")
	t.Path = stringField(v, "Path")
	for _, inner := range []string{"Job", "Var"} {
		f := v.FieldByName(inner)
		if !f.IsValid() || f.Kind() != reflect.Pointer || f.IsNil() {
			continue
		}
		e := f.Elem()
		if e.Kind() != reflect.Struct {
			continue
		}
		if t.Namespace == "" {
			t.Namespace = stringField(e, "Namespace")
		}
		if t.Path == "" {
			t.Path = stringField(e, "Path")
		}
	}
	if t.Namespace == "" {
		t.Namespace = "default"
	}
	return t
}

func stringField(v reflect.Value, name string) string {
	f := v.FieldByName(name)
	if f.IsValid() && f.Kind() == reflect.String {
		return f.String()
	}
	return ""
}
