package httpapi

import (
	"net/http"

	"github.com/drover-io/drover/acl"
)

// routeRequirements is what each route's caller must be granted when ACLs
// are enabled: the one declaration of the API's access control
// (docs/acl.md renders it). Keys are "METHOD pattern" as registered; a
// route without an entry is refused, and TestEveryRouteDeclaresRequirement
// fails for it.
var routeRequirements = buildRouteRequirements()

// Shorthands of the namespace requirements.
var (
	nsListJobs  = acl.Namespace(acl.NamespaceCapabilityListJobs)
	nsReadJob   = acl.Namespace(acl.NamespaceCapabilityReadJob)
	nsSubmitJob = acl.Namespace(acl.NamespaceCapabilitySubmitJob)
	nsParseJob  = acl.Namespace(acl.NamespaceCapabilityParseJob)
	nsLifecycle = acl.Namespace(acl.NamespaceCapabilityAllocLifecycle)
	nsReadFS    = acl.Namespace(acl.NamespaceCapabilityReadFS)
	nsReadLogs  = acl.Namespace(acl.NamespaceCapabilityReadLogs)
	nsExec      = acl.Namespace(acl.NamespaceCapabilityAllocExec)
)

func buildRouteRequirements() map[string]acl.Requirement {
	m := map[string]acl.Requirement{}
	add := func(pattern string, r acl.Requirement, methods ...string) {
		for _, meth := range methods {
			m[meth+" "+pattern] = r
		}
	}
	get := []string{http.MethodGet}
	write := []string{http.MethodPut, http.MethodPost}
	del := []string{http.MethodDelete}

	// Jobs, allocations, evaluations, deployments: the request's
	// namespace (an allocation's own for the routes of one allocation;
	// lists across namespaces are filtered).
	add("/v1/jobs", nsListJobs, get...)
	add("/v1/jobs", nsSubmitJob, write...)
	add("/v1/jobs/parse", nsParseJob, http.MethodGet, http.MethodPut, http.MethodPost)
	add("/v1/validate/job", nsReadJob, write...)
	add("/v1/job/{id}", nsReadJob, get...)
	add("/v1/job/{id}", nsSubmitJob, write...)
	add("/v1/job/{id}", nsSubmitJob, del...)
	add("/v1/job/{id}/evaluate", nsSubmitJob, write...)
	for _, p := range []string{"allocations", "evaluations", "summary", "versions", "deployment", "deployments", "services", "submission"} {
		add("/v1/job/{id}/"+p, nsReadJob, get...)
	}
	add("/v1/job/{id}/plan", nsSubmitJob, write...)
	add("/v1/job/{id}/versions/{name}/tag", nsSubmitJob, http.MethodPut, http.MethodPost, http.MethodDelete)
	add("/v1/job/{id}/scale", acl.Namespace(acl.NamespaceCapabilityReadJobScaling), get...)
	add("/v1/job/{id}/scale", acl.Namespace(acl.NamespaceCapabilityScaleJob), write...)
	add("/v1/scaling/policies", acl.Namespace(acl.NamespaceCapabilityListScalingPolicies), get...)
	add("/v1/scaling/policy/{id}", acl.Namespace(acl.NamespaceCapabilityReadScalingPolicy), get...)
	add("/v1/job/{id}/revert", nsSubmitJob, write...)
	add("/v1/job/{id}/periodic/force", nsSubmitJob, write...)
	add("/v1/job/{id}/dispatch", acl.Namespace(acl.NamespaceCapabilityDispatchJob), write...)
	add("/v1/allocations", nsReadJob, get...)
	add("/v1/allocation/{id}", nsReadJob, get...)
	add("/v1/allocation/{id}/stop", nsLifecycle, write...)
	add("/v1/allocation/{id}/services", nsReadJob, get...)
	add("/v1/evaluations", nsReadJob, get...)
	add("/v1/evaluations", acl.Management(), del...)
	add("/v1/search", acl.AnyToken(), write...) // results filtered by the token (search.go)
	add("/v1/search/fuzzy", acl.AnyToken(), write...)
	add("/v1/evaluation/{id}", nsReadJob, get...)
	add("/v1/evaluation/{id}/allocations", nsReadJob, get...)
	add("/v1/deployments", nsReadJob, get...)
	add("/v1/deployment/{id}", nsReadJob, get...)
	add("/v1/deployment/allocations/{id}", nsReadJob, get...)
	add("/v1/deployment/fail/{id}", nsSubmitJob, write...)
	add("/v1/deployment/pause/{id}", nsSubmitJob, write...)
	add("/v1/deployment/promote/{id}", nsSubmitJob, write...)
	add("/v1/services", nsReadJob, get...)
	add("/v1/service/{name}", nsReadJob, get...)
	add("/v1/service/{name}/{id}", nsSubmitJob, del...)

	// The client's allocation endpoints: the allocation's namespace.
	add("/v1/client/allocation/{id}/restart", nsLifecycle, write...)
	add("/v1/client/allocation/{id}/signal", nsLifecycle, write...)
	add("/v1/client/allocation/{id}/checks", nsReadJob, get...)
	add("/v1/client/allocation/{id}/gc", nsLifecycle, http.MethodGet, http.MethodPut, http.MethodPost)
	add("/v1/client/allocation/{id}/stats", nsReadJob, get...)
	add("/v1/client/allocation/{id}/snapshot", nsReadFS, get...)
	add("/v1/client/allocation/{id}/timeline", nsReadJob, get...)
	add("/v1/client/allocation/{id}/exec", nsExec, get...)
	for _, p := range []string{"ls", "stat", "cat", "readat"} {
		add("/v1/client/fs/"+p+"/{id}", nsReadFS, get...)
	}
	add("/v1/client/fs/logs/{id}", nsReadLogs, get...)
	add("/v1/client/gc", acl.NodeWrite(), http.MethodGet, http.MethodPut, http.MethodPost)
	add("/v1/client/stats", acl.NodeRead(), get...)
	add("/v1/client/metadata", acl.NodeRead(), get...)
	add("/v1/client/metadata", acl.NodeWrite(), write...)

	add("/v1/volumes", acl.Namespace(acl.NamespaceCapabilityCSIListVolume), get...)
	add("/v1/volume/csi/{id}", acl.Namespace(acl.NamespaceCapabilityCSIReadVolume), get...)
	add("/v1/volume/csi/{id}", acl.Namespace(acl.NamespaceCapabilityCSIWriteVolume), http.MethodPut, http.MethodPost, http.MethodDelete)
	add("/v1/client/identity", acl.NodeRead(), get...)
	add("/v1/client/identity/renew", acl.NodeWrite(), http.MethodPut, http.MethodPost)

	// Nodes.
	add("/v1/nodes", acl.NodeRead(), get...)
	add("/v1/node/{id}", acl.NodeRead(), get...)
	// Node pools (the router serves /v1/node/pool/... as /v1/node-pool/...).
	add("/v1/node/pools", acl.NodeRead(), get...)
	add("/v1/node/pools", acl.Management(), write...)
	add("/v1/node-pool/{name}", acl.NodeRead(), get...)
	add("/v1/node-pool/{name}", acl.Management(), write...)
	add("/v1/node-pool/{name}", acl.Management(), del...)
	add("/v1/node-pool/{name}/nodes", acl.NodeRead(), get...)
	add("/v1/node-pool/{name}/jobs", nsListJobs, get...)
	add("/v1/node/{id}/allocations", acl.NodeRead(), get...)
	add("/v1/node/{id}/drain", acl.NodeWrite(), write...)
	add("/v1/node/{id}/evaluate", acl.NodeWrite(), write...)
	add("/v1/node/{id}/purge", acl.NodeWrite(), write...)
	add("/v1/node/{id}/eligibility", acl.NodeWrite(), write...)
	add("/v1/system/reconcile/summaries", acl.Management(), write...)

	// Variables: the path's capability in the request's namespace.
	add("/v1/vars", acl.Variable(acl.VariablesCapabilityList), get...)
	add("/v1/var/{path...}", acl.Variable(acl.VariablesCapabilityRead), get...)
	add("/v1/var/{path...}", acl.Variable(acl.VariablesCapabilityWrite), write...)
	add("/v1/var/{path...}", acl.Variable(acl.VariablesCapabilityDestroy), del...)

	// Namespaces: any token lists and reads those it may use.
	add("/v1/namespaces", acl.AnyToken(), get...)
	add("/v1/namespace/{name}", acl.AnyToken(), get...)
	add("/v1/namespace", acl.Management(), write...)
	add("/v1/namespace/{name}", acl.Management(), write...)
	add("/v1/namespace/{name}", acl.Management(), del...)

	// The agent and the cluster.
	add("/v1/status/leader", acl.Public(), get...)
	add("/v1/status/peers", acl.Public(), get...)
	add("/v1/regions", acl.Public(), get...)
	add("/v1/agent/health", acl.Public(), get...)
	add("/v1/agent/self", acl.AgentRead(), get...)
	add("/v1/agent/schedulers", acl.AgentRead(), get...)
	add("/v1/agent/schedulers/config", acl.AgentRead(), get...)
	add("/v1/agent/schedulers/config", acl.AgentWrite(), write...)
	add("/v1/agent/members", acl.NodeRead(), get...)
	add("/v1/agent/servers", acl.AgentRead(), get...)
	add("/v1/agent/join", acl.AgentWrite(), write...)
	add("/v1/agent/force-leave", acl.AgentWrite(), write...)
	add("/v1/agent/monitor", acl.AgentRead(), get...)
	add("/v1/agent/pprof/{profile}", acl.AgentWrite(), get...)
	add("/v1/agent/keyring/list", acl.AgentRead(), get...)
	for _, op := range []string{"install", "use", "remove"} {
		add("/v1/agent/keyring/"+op, acl.AgentWrite(), write...)
	}
	add("/v1/metrics", acl.Public(), get...)
	add("/.well-known/jwks.json", acl.Public(), get...)
	add("/v1/event/stream", acl.AnyToken(), get...) // filtered per event
	add("/v1/system/gc", acl.Management(), write...)

	// The operator.
	add("/v1/operator/scheduler/configuration", acl.OperatorRead(), get...)
	add("/v1/operator/scheduler/configuration", acl.OperatorWrite(), write...)
	add("/v1/operator/raft/configuration", acl.OperatorRead(), get...)
	add("/v1/operator/raft/peer", acl.OperatorWrite(), del...)
	add("/v1/operator/autopilot/configuration", acl.OperatorRead(), get...)
	add("/v1/operator/autopilot/configuration", acl.OperatorWrite(), write...)
	add("/v1/operator/autopilot/health", acl.OperatorRead(), get...)
	add("/v1/operator/snapshot", acl.Management(), get...)
	add("/v1/operator/snapshot", acl.Management(), write...)
	add("/v1/operator/keyring/keys", acl.OperatorRead(), get...)
	add("/v1/operator/keyring/rotate", acl.OperatorWrite(), write...)
	add("/v1/operator/keyring/key/{id}", acl.OperatorWrite(), del...)

	// ACLs: management, but for bootstrap, logins and a token's own.
	add("/v1/acl/bootstrap", acl.Public(), write...)
	add("/v1/acl/token/self", acl.AnyToken(), get...)
	for _, p := range []string{"/v1/acl/policies", "/v1/acl/tokens", "/v1/acl/roles"} {
		add(p, acl.Management(), get...)
	}
	// A token reads the policies and roles it holds (the server checks
	// which): management reads any.
	for _, p := range []string{"/v1/acl/policy/{name}", "/v1/acl/role/{id}", "/v1/acl/role/name/{name}", "/v1/acl/policy/self"} {
		add(p, acl.AnyToken(), get...)
	}
	for _, p := range []string{"/v1/acl/policy/{name}", "/v1/acl/token/{id}", "/v1/acl/role/{id}"} {
		add(p, acl.Management(), http.MethodPut, http.MethodPost, http.MethodDelete)
	}
	add("/v1/acl/token/{id}", acl.Management(), get...)
	add("/v1/acl/token", acl.Management(), write...)
	add("/v1/acl/role", acl.Management(), write...)
	// Logins: auth methods and binding rules are management's; anyone may
	// list the auth methods and log in (the identity provider's JWT is the
	// credential), or exchange a one-time token (its secret is).
	add("/v1/acl/auth-methods", acl.Public(), get...)
	add("/v1/acl/auth-method", acl.Management(), write...)
	add("/v1/acl/auth-method/{name}", acl.Management(), http.MethodGet, http.MethodPut, http.MethodPost, http.MethodDelete)
	add("/v1/acl/binding-rules", acl.Management(), get...)
	add("/v1/acl/binding-rule", acl.Management(), write...)
	add("/v1/acl/binding-rule/{id}", acl.Management(), http.MethodGet, http.MethodPut, http.MethodPost, http.MethodDelete)
	add("/v1/acl/login", acl.Public(), write...)
	add("/v1/acl/oidc/auth-url", acl.Public(), write...)
	add("/v1/acl/oidc/complete-auth", acl.Public(), write...)
	add("/v1/acl/token/onetime", acl.AnyToken(), write...)
	add("/v1/acl/token/onetime/exchange", acl.Public(), write...)
	add("/v1/acl/identity/client-introduction-token", acl.NodeWrite(), write...)
	return m
}

// RouteRequirements returns each route's requirement as text, by route
// ("GET /v1/jobs" -> "namespace:list-jobs"): for docs and tests.
func RouteRequirements() map[string]string {
	out := make(map[string]string, len(routeRequirements))
	for k, v := range routeRequirements {
		out[k] = v.String()
	}
	return out
}
