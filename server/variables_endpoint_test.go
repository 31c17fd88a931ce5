package server

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/raft"

	"github.com/drover-io/drover/server/state"
	"github.com/drover-io/drover/structs"
)

func putVar(t *testing.T, s *Server, op, path string, items map[string]string, check uint64) *structs.VariablesApplyResponse {
	t.Helper()
	resp, err := s.VarApply(context.Background(), &structs.VariablesApplyRequest{
		Op: op, Var: &structs.VariableDecrypted{VariableMetadata: structs.VariableMetadata{Path: path}, Items: items}, CheckIndex: check,
	})
	if err != nil {
		t.Fatalf("VarApply %s %s: %v", op, path, err)
	}
	return resp
}

func getVar(t *testing.T, s *Server, path string) *structs.VariableDecrypted {
	t.Helper()
	resp, err := s.VarGet(context.Background(), &structs.VariablesReadRequest{Path: path})
	if err != nil {
		t.Fatalf("VarGet %s: %v", path, err)
	}
	return resp.Data
}

// snapshotBytes persists a snapshot of the server's state.
func snapshotBytes(t *testing.T, s *Server) []byte {
	t.Helper()
	snap, err := s.fsm.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	defer snap.Release()
	sink := &memSink{}
	if err := snap.Persist(sink); err != nil {
		t.Fatal(err)
	}
	return sink.Bytes()
}

func TestVariablesAreEncryptedAtRest(t *testing.T) {
	logs := raft.NewInmemStore()
	s := newTestServer(t, func(c *Config) { c.LogStore, c.StableStore = logs, logs })
	const secret = "hunter2-the-secret"
	out := putVar(t, s, structs.VarOpSet, "app/db", map[string]string{"password": secret}, 0)
	if out.Conflicted || out.Output == nil || out.Output.Items["password"] != secret || out.Output.CreateIndex == 0 ||
		out.Output.ModifyIndex != out.Index || out.Output.Namespace != "default" || out.Output.CreateTime == 0 {
		t.Fatalf("write answered %+v", out)
	}
	got := getVar(t, s, "app/db")
	if got == nil || got.Items["password"] != secret || got.ModifyIndex != out.Index {
		t.Fatalf("read %+v", got)
	}
	stored, err := s.State().VariableByPath(nil, "default", "app/db")
	if err != nil || stored == nil {
		t.Fatalf("stored %v, %v", stored, err)
	}
	active, _ := s.State().ActiveRootKey(nil)
	if stored.KeyID != active.KeyID {
		t.Fatalf("encrypted with %s, active key %s", stored.KeyID, active.KeyID)
	}
	// Neither the state, nor a snapshot, nor the raft log holds the
	// secret in the clear.
	if bytes.Contains(stored.Data, []byte(secret)) {
		t.Fatal("the state holds the items in the clear")
	}
	if bytes.Contains(snapshotBytes(t, s), []byte(secret)) {
		t.Fatal("a snapshot holds the items in the clear")
	}
	last, _ := logs.LastIndex()
	for i := uint64(1); i <= last; i++ {
		var l raft.Log
		if err := logs.GetLog(i, &l); err != nil {
			t.Fatal(err)
		}
		if bytes.Contains(l.Data, []byte(secret)) {
			t.Fatalf("raft entry %d holds the items in the clear", i)
		}
	}
	// A snapshot restores into a server with the same KEK: the variable
	// reads back.
	fresh, err := newFSM(slog.New(slog.DiscardHandler), nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := fresh.Restore(io.NopCloser(bytes.NewReader(snapshotBytes(t, s)))); err != nil {
		t.Fatal(err)
	}
	v, _ := fresh.State().VariableByPath(nil, "default", "app/db")
	dec, err := s.decryptVariable(fresh.State(), v)
	if err != nil || dec.Items["password"] != secret {
		t.Fatalf("restored variable: %+v, %v", dec, err)
	}
}

func TestVariablesCAS(t *testing.T) {
	s := newTestServer(t, nil)
	first := putVar(t, s, structs.VarOpCAS, "cas/a", map[string]string{"k": "1"}, 0)
	if first.Conflicted {
		t.Fatal("create with cas=0 conflicted")
	}
	idx := first.Output.ModifyIndex
	for _, tc := range []struct {
		name     string
		op       string
		check    uint64
		conflict bool
	}{
		{"create over an existing variable", structs.VarOpCAS, 0, true},
		{"update at a stale index", structs.VarOpCAS, idx - 1, true},
		{"delete at a stale index", structs.VarOpDeleteCAS, idx + 1, true},
		{"update at the current index", structs.VarOpCAS, idx, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := s.State().Index(state.TableVariables)
			r := putVar(t, s, tc.op, "cas/a", map[string]string{"k": "2"}, tc.check)
			if r.Conflicted != tc.conflict {
				t.Fatalf("conflicted = %v, want %v", r.Conflicted, tc.conflict)
			}
			if !tc.conflict {
				return
			}
			if r.Conflict == nil || r.Conflict.Items["k"] != "1" || r.Conflict.ModifyIndex != idx {
				t.Fatalf("conflict = %+v, want the variable as it is", r.Conflict)
			}
			if s.State().Index(state.TableVariables) != before {
				t.Fatal("a conflicting CAS changed the variables")
			}
		})
	}
	cur := getVar(t, s, "cas/a")
	if r := putVar(t, s, structs.VarOpDeleteCAS, "cas/a", nil, cur.ModifyIndex); r.Conflicted {
		t.Fatal("delete at the current index conflicted")
	}
	if getVar(t, s, "cas/a") != nil {
		t.Fatal("deleted variable still reads")
	}
	// A CAS on a variable that does not exist conflicts with one that has
	// only its namespace and path.
	r := putVar(t, s, structs.VarOpCAS, "cas/missing", map[string]string{"k": "1"}, 7)
	if !r.Conflicted || r.Conflict == nil || r.Conflict.Path != "cas/missing" || r.Conflict.ModifyIndex != 0 {
		t.Fatalf("cas on a missing variable: %+v", r)
	}
}

func TestVariablesBadInputWritesNothing(t *testing.T) {
	s := newTestServer(t, nil)
	big := map[string]string{"blob": strings.Repeat("x", structs.MaxVariableSize)}
	for _, tc := range []struct {
		name  string
		ns    string
		path  string
		items map[string]string
		want  string
	}{
		{"dot-dot", "", "a/../b", map[string]string{"k": "v"}, `contains ".."`},
		{"dot", "", "a/.b", map[string]string{"k": "v"}, `contains '.'`},
		{"empty segment", "", "a//b", map[string]string{"k": "v"}, "empty segment"},
		{"too long", "", strings.Repeat("a", 129), map[string]string{"k": "v"}, "at most 128"},
		{"reserved", "", "nomad/secrets", map[string]string{"k": "v"}, "reserved"},
		{"no items", "", "a", nil, "variable missing required Items object"},
		{"empty key", "", "a", map[string]string{"": "v"}, "empty key"},
		{"too large", "", "a", big, "at most 65536"},
		{"all namespaces", "*", "a", map[string]string{"k": "v"}, "namespace"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := s.State().Index(state.TableVariables)
			_, err := s.VarApply(context.Background(), &structs.VariablesApplyRequest{Op: structs.VarOpSet,
				Var: &structs.VariableDecrypted{VariableMetadata: structs.VariableMetadata{Namespace: tc.ns, Path: tc.path}, Items: tc.items}})
			if structs.KindOf(err) != structs.KindInvalid || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want invalid with %q", err, tc.want)
			}
			if s.State().Index(state.TableVariables) != before {
				t.Fatal("refused write changed the variables")
			}
		})
	}
	// The job paths under nomad/ are allowed.
	putVar(t, s, structs.VarOpSet, "nomad/jobs/web", map[string]string{"k": "v"}, 0)
}

func TestVariablesWriteOnce(t *testing.T) {
	s := newTestServer(t, nil)
	req := &structs.VariablesApplyRequest{Op: structs.VarOpSet, WriteRequest: structs.WriteRequest{RequestID: "req-1"},
		Var: &structs.VariableDecrypted{VariableMetadata: structs.VariableMetadata{Path: "once"}, Items: map[string]string{"k": "v"}}}
	a, err := s.VarApply(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	b, err := s.VarApply(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if a.Index != b.Index || b.Output == nil || b.Output.Items["k"] != "v" || b.Conflicted {
		t.Fatalf("first %+v, repeat %+v", a, b)
	}
	if got := getVar(t, s, "once"); got.ModifyIndex != a.Index {
		t.Fatalf("the repeat wrote again: ModifyIndex %d, first write %d", got.ModifyIndex, a.Index)
	}
	// The write record holds no items.
	rec, _ := s.State().WriteRecordByID("req-1")
	if rec == nil || bytes.Contains(rec.Reply, []byte("k")) && bytes.Contains(rec.Reply, []byte("\xa1v")) {
		t.Fatalf("write record %+v", rec)
	}
}

func TestVariablesListPages(t *testing.T) {
	s := newTestServer(t, nil)
	for _, p := range []string{"app/e", "app/a", "app/c", "app/b", "app/d", "other"} {
		putVar(t, s, structs.VarOpSet, p, map[string]string{"k": "v"}, 0)
	}
	var got []string
	token := ""
	pages := 0
	for {
		resp, err := s.VarList(context.Background(), &structs.VariablesListRequest{PerPage: 2, NextToken: token,
			QueryOptions: structs.QueryOptions{Prefix: "app/"}})
		if err != nil {
			t.Fatal(err)
		}
		pages++
		for _, m := range resp.Data {
			got = append(got, m.Path)
		}
		if token = resp.NextToken; token == "" {
			break
		}
	}
	if strings.Join(got, ",") != "app/a,app/b,app/c,app/d,app/e" || pages != 3 {
		t.Fatalf("pages %d: %v", pages, got)
	}
	if _, err := s.VarList(context.Background(), &structs.VariablesListRequest{PerPage: -1}); structs.KindOf(err) != structs.KindInvalid {
		t.Fatalf("negative per_page: %v", err)
	}
}

func TestVarGetBlocksUntilTheVariableChanges(t *testing.T) {
	s := newTestServer(t, nil)
	w := putVar(t, s, structs.VarOpSet, "watch/me", map[string]string{"v": "1"}, 0)
	done := make(chan *structs.VariablesReadResponse, 1)
	errc := make(chan error, 1)
	go func() {
		resp, err := s.VarGet(context.Background(), &structs.VariablesReadRequest{Path: "watch/me",
			QueryOptions: structs.QueryOptions{MinQueryIndex: w.Index, MaxQueryTime: time.Minute}})
		if err != nil {
			errc <- err
			return
		}
		done <- resp
	}()
	// Another variable's change does not end the query; this one's does.
	putVar(t, s, structs.VarOpSet, "watch/other", map[string]string{"v": "x"}, 0)
	w2 := putVar(t, s, structs.VarOpSet, "watch/me", map[string]string{"v": "2"}, 0)
	select {
	case resp := <-done:
		if resp.Data == nil || resp.Data.Items["v"] != "2" || resp.Index != w2.Index {
			t.Fatalf("blocking read returned %+v at %d", resp.Data, resp.Index)
		}
	case err := <-errc:
		t.Fatal(err)
	case <-time.After(30 * time.Second):
		t.Fatal("the blocking read did not return after the change")
	}
}

func TestKeyringRotation(t *testing.T) {
	s := newTestServer(t, nil)
	ctx := context.Background()
	keys, err := s.KeyringList(ctx, &structs.KeyringListRequest{})
	if err != nil || len(keys.Keys) != 1 || keys.Keys[0].State != structs.RootKeyStateActive {
		t.Fatalf("bootstrap keyring: %+v, %v", keys, err)
	}
	first := keys.Keys[0].KeyID
	putVar(t, s, structs.VarOpSet, "old", map[string]string{"k": "old"}, 0)

	rot, err := s.KeyringRotate(ctx, &structs.KeyringRotateRequest{})
	if err != nil || rot.Key.KeyID == first || rot.Index == 0 {
		t.Fatalf("rotate: %+v, %v", rot, err)
	}
	putVar(t, s, structs.VarOpSet, "new", map[string]string{"k": "new"}, 0)
	if v, _ := s.State().VariableByPath(nil, "default", "new"); v.KeyID != rot.Key.KeyID {
		t.Fatalf("new write encrypted with %s, want the new key %s", v.KeyID, rot.Key.KeyID)
	}
	if v := getVar(t, s, "old"); v.Items["k"] != "old" {
		t.Fatalf("a variable of the old key reads %+v", v)
	}
	// The old key is still in use: it is not removed without force.
	if _, err := s.KeyringDelete(ctx, &structs.KeyringDeleteRequest{KeyID: first}); structs.KindOf(err) != structs.KindInvalid ||
		!strings.Contains(err.Error(), "1 variables") {
		t.Fatalf("delete of a key in use: %v", err)
	}
	if _, err := s.KeyringDelete(ctx, &structs.KeyringDeleteRequest{KeyID: rot.Key.KeyID, Force: true}); structs.KindOf(err) != structs.KindInvalid {
		t.Fatalf("delete of the active key: %v", err)
	}
	// A full rotation encrypts every variable again.
	full, err := s.KeyringRotate(ctx, &structs.KeyringRotateRequest{Full: true})
	if err != nil || full.Rekeyed != 2 {
		t.Fatalf("full rotate: %+v, %v", full, err)
	}
	for _, p := range []string{"old", "new"} {
		if v, _ := s.State().VariableByPath(nil, "default", p); v.KeyID != full.Key.KeyID {
			t.Fatalf("%s still encrypted with %s", p, v.KeyID)
		}
	}
	if v := getVar(t, s, "old"); v.Items["k"] != "old" {
		t.Fatalf("after a full rotation: %+v", v)
	}
	if _, err := s.KeyringDelete(ctx, &structs.KeyringDeleteRequest{KeyID: first}); err != nil {
		t.Fatalf("delete of an unused key: %v", err)
	}
	pubs, err := s.KeyringPublicKeys(ctx, &structs.KeyringPublicKeysRequest{})
	if err != nil || len(pubs.PublicKeys) != 2 || len(pubs.PublicKeys[0].PublicKey) != 32 {
		t.Fatalf("public keys: %+v, %v", pubs, err)
	}
	if _, err := s.KeyringRotate(ctx, &structs.KeyringRotateRequest{Algorithm: "rsa"}); structs.KindOf(err) != structs.KindInvalid {
		t.Fatalf("unknown algorithm: %v", err)
	}
}

func TestVariableLockExpires(t *testing.T) {
	clock := &fakeClock{now: time.Unix(1700000000, 0)}
	s := newTestServer(t, func(c *Config) { c.Clock = clock; c.HeartbeatTTL = 24 * time.Hour })
	ctx := context.Background()
	lockOp := func(op string, lock *structs.VariableLock, items map[string]string) *structs.VariablesApplyResponse {
		t.Helper()
		r, err := s.VarApply(ctx, &structs.VariablesApplyRequest{Op: op,
			Var: &structs.VariableDecrypted{VariableMetadata: structs.VariableMetadata{Path: "leader", Lock: lock}, Items: items}})
		if err != nil {
			t.Fatalf("%s: %v", op, err)
		}
		return r
	}
	got := lockOp(structs.VarOpLockAcquire, &structs.VariableLock{TTL: "10s", LockDelay: "5s"}, nil)
	if got.Conflicted || got.Output.Lock == nil || got.Output.Lock.ID == "" || got.Output.Lock.TTL != "10s" {
		t.Fatalf("acquire: %+v", got.Output)
	}
	lock := got.Output.Lock
	if again := lockOp(structs.VarOpLockAcquire, nil, nil); !again.Conflicted {
		t.Fatal("a held lock was taken again")
	}
	if w := putVar(t, s, structs.VarOpSet, "leader", map[string]string{"k": "v"}, 0); !w.Conflicted {
		t.Fatal("a locked variable was written without its lock")
	}
	if w := lockOp(structs.VarOpSet, lock, map[string]string{"k": "holder"}); w.Conflicted {
		t.Fatal("the holder could not write")
	}
	// Renewing restarts the TTL.
	clock.Advance(8 * time.Second)
	if r := lockOp(structs.VarOpLockRenew, lock, nil); r.Conflicted || r.Output.Lock.ID != lock.ID {
		t.Fatalf("renew: %+v", r)
	}
	clock.Advance(8 * time.Second) // 16s after taking it, 8s after the renewal
	if v := getVar(t, s, "leader"); v.Lock == nil {
		t.Fatal("the lock expired although it was renewed")
	}
	before := getVar(t, s, "leader")
	clock.Advance(3 * time.Second) // past the renewed TTL
	resp, err := s.VarGet(ctx, &structs.VariablesReadRequest{Path: "leader",
		QueryOptions: structs.QueryOptions{MinQueryIndex: before.ModifyIndex, MaxQueryTime: time.Minute}})
	if err != nil {
		t.Fatal(err)
	}
	if resp.Data.Lock != nil || resp.Data.Items["k"] != "holder" {
		t.Fatalf("after the TTL: %+v", resp.Data)
	}
	// The lock delay keeps it from being taken at once.
	if r := lockOp(structs.VarOpLockAcquire, nil, nil); !r.Conflicted {
		t.Fatal("an expired lock was taken within its delay")
	}
	clock.Advance(6 * time.Second)
	r := lockOp(structs.VarOpLockAcquire, nil, nil)
	if r.Conflicted {
		t.Fatal("the lock could not be taken after its delay")
	}
	if rel := lockOp(structs.VarOpLockRelease, r.Output.Lock, nil); rel.Conflicted || rel.Output.Lock != nil {
		t.Fatalf("release: %+v", rel)
	}
	if rel := lockOp(structs.VarOpLockRelease, r.Output.Lock, nil); !rel.Conflicted {
		t.Fatal("released a lock twice")
	}
}
