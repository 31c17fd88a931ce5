package server

import (
	"context"
	"testing"
	"time"

	"github.com/drover-io/drover/structs"
)

// TestKeyringIndexesAfterRotation follows a Nomad API client that rotates
// the keyring and then lists the keys blocking on the new key's
// CreateIndex (Nomad's own API suite does). As on Nomad, the rotation
// answers the new key's metadata as proposed, its indexes unset, and the
// write's index beside it, so that list answers at once; the listed keys
// carry the write's index. The list's MaxQueryTime is short only so that a
// regression fails quickly instead of waiting out the default wait.
func TestKeyringIndexesAfterRotation(t *testing.T) {
	s := newTestServer(t, nil)
	ctx := context.Background()
	before, err := s.KeyringList(ctx, &structs.KeyringListRequest{})
	if err != nil || len(before.Keys) != 1 {
		t.Fatalf("bootstrap keyring: %+v, %v", before, err)
	}
	first := before.Keys[0]

	rot, err := s.KeyringRotate(ctx, &structs.KeyringRotateRequest{})
	if err != nil {
		t.Fatalf("rotate: %v", err)
	}
	if rot.Index <= before.Index {
		t.Fatalf("rotate index %d, want above the list's %d", rot.Index, before.Index)
	}
	if rot.Key.CreateIndex != 0 || rot.Key.ModifyIndex != 0 {
		t.Errorf("rotated key has CreateIndex %d, ModifyIndex %d: want 0, as Nomad (the write's index is the response's Index)",
			rot.Key.CreateIndex, rot.Key.ModifyIndex)
	}

	list, err := s.KeyringList(ctx, &structs.KeyringListRequest{QueryOptions: structs.QueryOptions{
		MinQueryIndex: rot.Key.CreateIndex, MaxQueryTime: 10 * time.Millisecond,
	}})
	if err != nil {
		t.Fatalf("list after rotation: %v", err)
	}
	if list.Index != rot.Index {
		t.Errorf("list index %d, want the rotation's %d", list.Index, rot.Index)
	}
	if list.Index <= rot.Key.CreateIndex {
		t.Errorf("list blocking on the rotated key's CreateIndex %d answered index %d: it waits for the next keyring change", rot.Key.CreateIndex, list.Index)
	}
	want := map[string]struct {
		state          string
		create, modify uint64
	}{
		first.KeyID:   {structs.RootKeyStateInactive, first.CreateIndex, rot.Index},
		rot.Key.KeyID: {structs.RootKeyStateActive, rot.Index, rot.Index},
	}
	if len(list.Keys) != len(want) {
		t.Fatalf("list after rotation: %d keys, want %d", len(list.Keys), len(want))
	}
	for _, k := range list.Keys {
		w, ok := want[k.KeyID]
		if !ok {
			t.Errorf("unexpected key %s", k.KeyID)
			continue
		}
		if k.State != w.state || k.CreateIndex != w.create || k.ModifyIndex != w.modify {
			t.Errorf("key %s: state %s, indexes %d/%d; want %s, %d/%d", k.KeyID, k.State, k.CreateIndex, k.ModifyIndex, w.state, w.create, w.modify)
		}
	}

	del, err := s.KeyringDelete(ctx, &structs.KeyringDeleteRequest{KeyID: first.KeyID, Force: true})
	if err != nil {
		t.Fatalf("delete the former key: %v", err)
	}
	after, err := s.KeyringList(ctx, &structs.KeyringListRequest{})
	if err != nil || len(after.Keys) != 1 || after.Keys[0].KeyID != rot.Key.KeyID {
		t.Fatalf("list after delete: %+v, %v", after, err)
	}
	if del.Index <= rot.Index || after.Index != del.Index {
		t.Errorf("delete index %d, list index after it %d: want the delete's, above the rotation's %d", del.Index, after.Index, rot.Index)
	}
	pubs, err := s.KeyringPublicKeys(ctx, &structs.KeyringPublicKeysRequest{})
	if err != nil || pubs.Index != del.Index {
		t.Errorf("public keys index %+v, %v: want %d", pubs, err, del.Index)
	}
}
