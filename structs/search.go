package structs

// Search contexts: what a search (PUT /v1/search, /v1/search/fuzzy) looks
// through, named as Nomad's.
const (
	SearchContextAll         = "all"
	SearchContextJobs        = "jobs"
	SearchContextEvals       = "evals"
	SearchContextAllocs      = "allocs"
	SearchContextNodes       = "nodes"
	SearchContextNodePools   = "node_pools"
	SearchContextDeployments = "deployment"
	SearchContextNamespaces  = "namespaces"
	SearchContextVariables   = "vars"
	SearchContextPlugins     = "plugins"
	SearchContextVolumes     = "volumes"
	SearchContextGroups      = "groups"
	SearchContextTasks       = "tasks"
	SearchContextServices    = "services"
	SearchContextCommands    = "commands"
	SearchContextImages      = "images"
	SearchContextClasses     = "classes"
)

// SearchRequest looks for objects whose ID (a prefix search) or name (a
// fuzzy search: a case-insensitive substring of jobs, groups, tasks,
// services, commands, images, Java classes, nodes, node pools,
// namespaces and variables) matches Text, in one context or all.
type SearchRequest struct {
	Text    string
	Context string
	// Fuzzy selects the fuzzy search (/v1/search/fuzzy).
	Fuzzy bool
	QueryOptions
}

// SearchMatch is one object found: its ID (a job ID, a node name...), its
// namespace ("" for objects outside namespaces) and, for a fuzzy match,
// where it lives (namespace, job, group, task), as Nomad's Scope.
type SearchMatch struct {
	ID        string
	Namespace string
	Scope     []string
}

// SearchResponse holds the matches of each context searched (every
// context asked has an entry, empty when nothing matched) and whether its
// list was cut at the limit.
type SearchResponse struct {
	Matches     map[string][]SearchMatch
	Truncations map[string]bool
	QueryMeta
}
