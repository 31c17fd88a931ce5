package state

import (
	"fmt"

	memdb "github.com/hashicorp/go-memdb"

	"github.com/drover-io/drover/structs"
)

// Tables of a cluster's own settings: its identity and the autopilot
// configuration, one object each.
const (
	TableClusterMeta   = "cluster_meta"
	TableAutopilotConf = "autopilot_config"
)

// singletonSchema is the schema of a table of one object.
func singletonSchema(name string) *memdb.TableSchema {
	return &memdb.TableSchema{Name: name, Indexes: map[string]*memdb.IndexSchema{
		"id": {Name: "id", Unique: true, Indexer: &memdb.ConditionalIndex{
			Conditional: func(any) (bool, error) { return true, nil },
		}},
	}}
}

// ClusterMetadata returns the cluster's identity, nil before the first
// leader wrote it.
func (r *reader) ClusterMetadata(ws memdb.WatchSet) (*structs.ClusterMetadata, error) {
	return first[*structs.ClusterMetadata](r, ws, TableClusterMeta, "id")
}

// SetClusterMetadata stores the cluster's identity, unless one is stored:
// a cluster's ID never changes. ok says whether it was stored.
func (w *WriteTxn) SetClusterMetadata(m *structs.ClusterMetadata) (ok bool, err error) {
	raw, err := w.txn.First(TableClusterMeta, "id")
	if err != nil {
		return false, fmt.Errorf("read cluster metadata: %w", err)
	}
	if raw != nil {
		return false, nil
	}
	c := *m
	if err := w.txn.Insert(TableClusterMeta, &c); err != nil {
		return false, fmt.Errorf("store cluster metadata: %w", err)
	}
	w.markTable(TableClusterMeta)
	return true, nil
}

// AutopilotConfig returns the autopilot configuration, nil when it was
// never set (structs.DefaultAutopilotConfig applies).
func (r *reader) AutopilotConfig(ws memdb.WatchSet) (*structs.AutopilotConfig, error) {
	return first[*structs.AutopilotConfig](r, ws, TableAutopilotConf, "id")
}

// SetAutopilotConfig stores the autopilot configuration. With cas, it is
// stored only if the current ModifyIndex equals cfg.ModifyIndex (0: never
// set); ok says whether it was.
func (w *WriteTxn) SetAutopilotConfig(cfg *structs.AutopilotConfig, cas bool) (ok bool, err error) {
	raw, err := w.txn.First(TableAutopilotConf, "id")
	if err != nil {
		return false, fmt.Errorf("read autopilot configuration: %w", err)
	}
	c := *cfg
	c.CreateIndex = w.index
	if raw != nil {
		existing := raw.(*structs.AutopilotConfig)
		if cas && existing.ModifyIndex != cfg.ModifyIndex {
			return false, nil
		}
		c.CreateIndex = existing.CreateIndex
	} else if cas && cfg.ModifyIndex != 0 {
		return false, nil
	}
	c.ModifyIndex = w.index
	if err := w.txn.Insert(TableAutopilotConf, &c); err != nil {
		return false, fmt.Errorf("store autopilot configuration: %w", err)
	}
	w.markTable(TableAutopilotConf)
	return true, nil
}

// ClusterMetadata restores the cluster's identity.
func (r *Restorer) ClusterMetadata(m *structs.ClusterMetadata) error {
	return r.insert(TableClusterMeta, m)
}

// AutopilotConfig restores the autopilot configuration.
func (r *Restorer) AutopilotConfig(c *structs.AutopilotConfig) error {
	return r.insert(TableAutopilotConf, c)
}
