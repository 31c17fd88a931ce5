package server

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/drover-io/drover/rpcapi"
	"github.com/drover-io/drover/server/keyring"
	"github.com/drover-io/drover/structs"
)

// clusterVarApply sends a variable operation to s (a follower forwards it
// to the leader, which seals the items).
func clusterVarApply(t *testing.T, s *Server, op, path string, lock *structs.VariableLock, items map[string]string) *structs.VariablesApplyResponse {
	t.Helper()
	r, err := rpcapi.VarApply.Call(context.Background(), s, &structs.VariablesApplyRequest{Op: op,
		Var: &structs.VariableDecrypted{VariableMetadata: structs.VariableMetadata{Path: path, Lock: lock}, Items: items}})
	if err != nil {
		t.Fatalf("%s %s through %s: %v", op, path, s.config.NodeName, err)
	}
	return r
}

// staleVarGet reads a variable from s's own state (decrypted with s's
// keyring), once s holds index.
func staleVarGet(s *Server, path string, index uint64) (*structs.VariablesReadResponse, error) {
	return rpcapi.VarGet.Call(context.Background(), s, &structs.VariablesReadRequest{Path: path,
		QueryOptions: structs.QueryOptions{AllowStale: true, MinQueryIndex: index - 1, MaxQueryTime: clusterWait}})
}

// TestClusterVariablesOnEveryServer: the keyring's root keys are
// replicated by raft, so with the same KEK every server decrypts what the
// leader sealed (a stale read served by a follower, and the next leader
// after a failover), and a variable's lock outlives the leader that
// granted it.
func TestClusterVariablesOnEveryServer(t *testing.T) {
	kek, err := keyring.GenerateKEK()
	if err != nil {
		t.Fatal(err)
	}
	servers := startCluster(t, func(_ int, c *Config) { c.KEK = kek })
	f := followers(servers)[0]
	w := clusterVarApply(t, f, structs.VarOpSet, "app/db", nil, map[string]string{"password": "s3cret"})
	if w.Conflicted || w.Output == nil || w.Output.Items["password"] != "s3cret" {
		t.Fatalf("write through a follower: %+v", w)
	}
	for _, s := range servers {
		r, err := staleVarGet(s, "app/db", w.Index)
		if err != nil || r.Data == nil || r.Data.Items["password"] != "s3cret" {
			t.Fatalf("%s's own read: %+v, %v", s.config.NodeName, r, err)
		}
	}
	lock := clusterVarApply(t, f, structs.VarOpLockAcquire, "app/leader", &structs.VariableLock{TTL: "1h"}, nil)
	if lock.Conflicted || lock.Output.Lock == nil {
		t.Fatalf("lock through a follower: %+v", lock)
	}

	old := waitLeader(t, servers)
	if err := old.Shutdown(); err != nil {
		t.Fatal(err)
	}
	var rest []*Server
	for _, s := range servers {
		if s != old {
			rest = append(rest, s)
		}
	}
	leader := waitLeader(t, rest)
	r, err := rpcapi.VarGet.Call(context.Background(), followers(rest)[0], &structs.VariablesReadRequest{Path: "app/db"})
	if err != nil || r.Data == nil || r.Data.Items["password"] != "s3cret" {
		t.Fatalf("read from the new leader %s: %+v, %v", leader.config.NodeName, r, err)
	}
	if again := clusterVarApply(t, leader, structs.VarOpLockAcquire, "app/leader", &structs.VariableLock{TTL: "1h"}, nil); !again.Conflicted {
		t.Fatal("the new leader let another take a held lock")
	}
	if rel := clusterVarApply(t, followers(rest)[0], structs.VarOpLockRelease, "app/leader", lock.Output.Lock, nil); rel.Conflicted {
		t.Fatalf("the holder could not release its lock after the failover: %+v", rel)
	}
}

// TestClusterVariablesOtherKEK: a server whose KEK is not the one that
// wrapped the root keys cannot decrypt, and says which file to copy; a
// read it forwards to the leader is unaffected.
func TestClusterVariablesOtherKEK(t *testing.T) {
	kek, err := keyring.GenerateKEK()
	if err != nil {
		t.Fatal(err)
	}
	other, err := keyring.GenerateKEK()
	if err != nil {
		t.Fatal(err)
	}
	servers := startCluster(t, func(i int, c *Config) {
		c.KEK = kek
		if i == 2 {
			c.KEK = other
		}
	})
	// The leader made the root key with its KEK: the servers with the
	// other one cannot open it (s3, or s1 and s2 if s3 leads).
	leader := waitLeader(t, servers)
	var odd *Server
	for _, s := range servers {
		if s.config.KEK != leader.config.KEK {
			odd = s
		}
	}
	w := clusterVarApply(t, odd, structs.VarOpSet, "app/db", nil, map[string]string{"password": "s3cret"})
	_, err = staleVarGet(odd, "app/db", w.Index)
	for _, want := range []string{kek.ID(), other.ID(), "keyring.kek"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Fatalf("read on %s, whose KEK is not the leader's: %v; want an error naming %q", odd.config.NodeName, err, want)
		}
	}
	r, err := rpcapi.VarGet.Call(context.Background(), odd, &structs.VariablesReadRequest{Path: "app/db",
		QueryOptions: structs.QueryOptions{MaxQueryTime: time.Second}})
	if err != nil || r.Data.Items["password"] != "s3cret" {
		t.Fatalf("read forwarded to the leader: %+v, %v", r, err)
	}
}
