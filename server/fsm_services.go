package server

import (
	"fmt"

	"github.com/drover-io/drover/server/state"
	"github.com/drover-io/drover/structs"
)

// The raft commands of service registrations (state/services.go).

// ServiceUpsertCommand stores service registrations. The FSM answers how
// many it stored (those of unknown or terminal allocations are skipped).
type ServiceUpsertCommand struct {
	Services []*structs.ServiceRegistration
}

// ServiceDeleteCommand deletes registrations by ID in Namespace, and every
// registration of AllocIDs. The FSM answers how many it deleted.
type ServiceDeleteCommand struct {
	Namespace string
	IDs       []string
	AllocIDs  []string
}

// applyServices applies one of the commands above; *resp is set inside
// the transaction, so that a deduplicated write records it.
func (f *FSM) applyServices(t MessageType, body []byte, batch func(func(w *state.WriteTxn) error) error, resp *any) error {
	switch t {
	case ServiceUpsertRequestType:
		var cmd ServiceUpsertCommand
		if err := decodeBody(f.handle, body, &cmd); err != nil {
			return fmt.Errorf("decode %s: %w", t, err)
		}
		return batch(func(w *state.WriteTxn) error {
			n, err := w.UpsertServiceRegistrations(cmd.Services)
			*resp = n
			return err
		})
	case ServiceDeleteRequestType:
		var cmd ServiceDeleteCommand
		if err := decodeBody(f.handle, body, &cmd); err != nil {
			return fmt.Errorf("decode %s: %w", t, err)
		}
		return batch(func(w *state.WriteTxn) error {
			n, err := w.DeleteServiceRegistrations(cmd.Namespace, cmd.IDs)
			if err != nil {
				return err
			}
			m, err := w.DeleteServiceRegistrationsByAlloc(cmd.AllocIDs)
			*resp = n + m
			return err
		})
	}
	return fmt.Errorf("not a services command: %s", t)
}
