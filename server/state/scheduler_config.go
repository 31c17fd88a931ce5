package state

import (
	"fmt"

	memdb "github.com/hashicorp/go-memdb"

	"github.com/drover-io/drover/structs"
)

// SchedulerConfig returns the scheduler configuration, or nil when it was
// never set (the defaults apply: structs.DefaultSchedulerConfiguration).
func (r *reader) SchedulerConfig(ws memdb.WatchSet) (*structs.SchedulerConfiguration, error) {
	return first[*structs.SchedulerConfiguration](r, ws, TableSchedConf, "id")
}

// SetSchedulerConfig stores the scheduler configuration. With cas, it is
// stored only if the current ModifyIndex equals cfg.ModifyIndex (0: never
// set); ok says whether it was.
func (w *WriteTxn) SetSchedulerConfig(cfg *structs.SchedulerConfiguration, cas bool) (ok bool, err error) {
	raw, err := w.txn.First(TableSchedConf, "id")
	if err != nil {
		return false, fmt.Errorf("read scheduler configuration: %w", err)
	}
	c := *cfg
	c.CreateIndex = w.index
	if raw != nil {
		existing := raw.(*structs.SchedulerConfiguration)
		if cas && existing.ModifyIndex != cfg.ModifyIndex {
			return false, nil
		}
		c.CreateIndex = existing.CreateIndex
	} else if cas && cfg.ModifyIndex != 0 {
		return false, nil
	}
	c.ModifyIndex = w.index
	if err := w.txn.Insert(TableSchedConf, &c); err != nil {
		return false, fmt.Errorf("store scheduler configuration: %w", err)
	}
	w.markTable(TableSchedConf)
	return true, nil
}

// SchedulerConfig restores the scheduler configuration.
func (r *Restorer) SchedulerConfig(c *structs.SchedulerConfiguration) error {
	return r.insert(TableSchedConf, c)
}
