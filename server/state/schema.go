package state

import memdb "github.com/hashicorp/go-memdb"

// Table names.
const (
	TableIndex      = "index"
	TableJobs       = "jobs"
	TableJobSummary = "job_summary"
	TableAllocs     = "allocs"
	TableEvals      = "evals"
	TableNodes      = "nodes"
	TableJobVersion = "job_version"
	TableDeployment = "deployment"
	TableSchedConf  = "scheduler_config"
)

// indexEntry records the raft index at which a table last changed.
type indexEntry struct {
	Key   string
	Value uint64
}

func nsIDIndex(idField string) *memdb.IndexSchema {
	return &memdb.IndexSchema{
		Name:   "id",
		Unique: true,
		Indexer: &memdb.CompoundIndex{Indexes: []memdb.Indexer{
			&memdb.StringFieldIndex{Field: "Namespace"},
			&memdb.StringFieldIndex{Field: idField},
		}},
	}
}

func jobIndex() *memdb.IndexSchema {
	return &memdb.IndexSchema{
		Name: "job",
		Indexer: &memdb.CompoundIndex{Indexes: []memdb.Indexer{
			&memdb.StringFieldIndex{Field: "Namespace"},
			&memdb.StringFieldIndex{Field: "JobID"},
		}},
	}
}

func stringIndex(name, field string, unique, allowMissing bool) *memdb.IndexSchema {
	return &memdb.IndexSchema{
		Name:         name,
		Unique:       unique,
		AllowMissing: allowMissing,
		Indexer:      &memdb.StringFieldIndex{Field: field},
	}
}

func schema() *memdb.DBSchema {
	return &memdb.DBSchema{Tables: map[string]*memdb.TableSchema{
		TableIndex: {Name: TableIndex, Indexes: map[string]*memdb.IndexSchema{
			"id": stringIndex("id", "Key", true, false),
		}},
		TableJobs: {Name: TableJobs, Indexes: map[string]*memdb.IndexSchema{
			"id": nsIDIndex("ID"),
		}},
		TableJobSummary: {Name: TableJobSummary, Indexes: map[string]*memdb.IndexSchema{
			"id": nsIDIndex("JobID"),
		}},
		TableAllocs: {Name: TableAllocs, Indexes: map[string]*memdb.IndexSchema{
			"id":   stringIndex("id", "ID", true, false),
			"job":  jobIndex(),
			"node": stringIndex("node", "NodeID", false, true),
			"eval": stringIndex("eval", "EvalID", false, true),
		}},
		TableEvals: {Name: TableEvals, Indexes: map[string]*memdb.IndexSchema{
			"id":  stringIndex("id", "ID", true, false),
			"job": jobIndex(),
		}},
		TableNodes: {Name: TableNodes, Indexes: map[string]*memdb.IndexSchema{
			"id":     stringIndex("id", "ID", true, false),
			"secret": stringIndex("secret", "SecretID", false, true), // acl.go: a node's calls
		}},
		TableJobVersion: {Name: TableJobVersion, Indexes: map[string]*memdb.IndexSchema{
			"id": {
				Name:   "id",
				Unique: true,
				Indexer: &memdb.CompoundIndex{Indexes: []memdb.Indexer{
					&memdb.StringFieldIndex{Field: "Namespace"},
					&memdb.StringFieldIndex{Field: "ID"},
					&memdb.UintFieldIndex{Field: "Version"},
				}},
			},
		}},
		TableDeployment: {Name: TableDeployment, Indexes: map[string]*memdb.IndexSchema{
			"id":  stringIndex("id", "ID", true, false),
			"job": jobIndex(),
		}},
		TableWriteRecords:   writeRecordsSchema(),
		TableVariables:      variablesSchema(),
		TableRootKeys:       rootKeysSchema(),
		TableServices:       servicesSchema(),
		TableNamespaces:     namespacesSchema(),
		TableNodePools:      nodePoolsSchema(),
		TablePeriodicLaunch: periodicLaunchSchema(), // periodic.go
		TableJobSubmissions: jobSubmissionsSchema(), // job_submissions.go
		// ACLs (acl.go).
		TableACLPolicies: aclPoliciesSchema(),
		TableACLTokens:   aclTokensSchema(),
		TableACLRoles:    aclRolesSchema(),
		TableACLState:    singletonSchema(TableACLState),
		// Logins (acl_auth.go).
		TableACLAuthMethods:  aclAuthMethodsSchema(),
		TableACLBindingRules: aclBindingRulesSchema(),
		TableOneTimeTokens:   oneTimeTokensSchema(),
		TableSchedConf: {Name: TableSchedConf, Indexes: map[string]*memdb.IndexSchema{
			"id": {Name: "id", Unique: true, Indexer: &memdb.ConditionalIndex{
				Conditional: func(any) (bool, error) { return true, nil },
			}},
		}},
		TableClusterMeta:   singletonSchema(TableClusterMeta),
		TableAutopilotConf: singletonSchema(TableAutopilotConf),
	}}
}
