package e2e

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/drover-io/drover/api"
)

// TestKEKHandoffCluster: the key-encryption key made by the first server
// reaches two servers that join later without an operator copying it
// (they ask a peer, proving the gossip key), so that a variable written
// before they joined reads after one of them becomes the leader.
// Parallel: its servers have their own ports and data dirs.
func TestKEKHandoffCluster(t *testing.T) {
	t.Parallel()
	requirePersistentAgent(t)
	const gossipKey = "ZBjKi3lb0dyJ8Rc0Q6sCP/yXxoN+Pp6rWL5jFZbYeYM="
	ports := newPortSet()
	var servers []*clusterServer
	others := func(idx int) func() []string {
		return func() []string {
			var out []string
			for j, o := range servers {
				if j != idx {
					out = append(out, o.serfAddr())
				}
			}
			return out
		}
	}
	// s1 bootstraps a cluster of one; s2 and s3 join it (bootstrap_expect
	// unset, as docs/cluster.md says for servers added later).
	for i, expect := range []int{1, 0, 0} {
		s := newClusterServer(t, ports, fmt.Sprintf("k%d", i+1), expect, others(i))
		s.extra = fmt.Sprintf("\nserver {\n  encrypt = %q\n}\n", gossipKey)
		servers = append(servers, s)
	}
	tc := &testCluster{ports: ports, servers: servers}
	first := servers[0]
	first.writeConfig(t)
	first.start(t)
	tc.waitLeader(t, servers[:1], "")
	kekFile := func(s *clusterServer) string { return filepath.Join(s.dataDir, "server", "keyring.kek") }
	want, err := os.ReadFile(kekFile(first))
	if err != nil {
		t.Fatalf("the first server's key-encryption key: %v", err)
	}
	secret := &api.Variable{Path: "app/db", Items: map[string]string{"password": "s3cret"}}
	if _, _, err := first.client(t).Variables().Put(secret, false, 0, nil); err != nil {
		t.Fatalf("put a variable through %s: %v", first.name, err)
	}

	for _, s := range servers[1:] {
		if _, err := os.Stat(kekFile(s)); !os.IsNotExist(err) {
			t.Fatalf("%s has a keyring.kek before its first start: %v", s.name, err)
		}
		s.writeConfig(t)
		s.start(t)
	}
	for _, s := range servers {
		waitFor(t, clusterWait, s.name+" to see three voters", func() (bool, string) {
			v := voters(t, s)
			return len(v) == 3, fmt.Sprint(v)
		})
	}
	for _, s := range servers[1:] {
		waitFor(t, clusterWait, s.name+" to receive the key-encryption key", func() (bool, string) {
			got, err := os.ReadFile(kekFile(s))
			if err != nil {
				return false, err.Error()
			}
			return bytes.Equal(got, want), "its keyring.kek differs from the first server's"
		})
		if fi, err := os.Stat(kekFile(s)); err != nil || fi.Mode().Perm() != 0o600 {
			t.Fatalf("%s's keyring.kek: %v, %v; want mode 0600", s.name, fi, err)
		}
	}

	// The first server goes: one of those that joined leads, and opens
	// what the first sealed.
	first.kill9(t)
	leader := tc.waitLeader(t, servers[1:], first.rpcAddr())
	t.Logf("%s leads after %s's SIGKILL", leader.name, first.name)
	for _, s := range servers[1:] {
		v, _, err := s.client(t).Variables().Read("app/db", nil)
		if err != nil || v.Items["password"] != "s3cret" {
			t.Fatalf("read the variable through %s after the leader change: %+v, %v", s.name, v, err)
		}
		v, _, err = s.client(t).Variables().Read("app/db", &api.QueryOptions{AllowStale: true})
		if err != nil || v.Items["password"] != "s3cret" {
			t.Fatalf("%s's own (stale) read of the variable: %+v, %v", s.name, v, err)
		}
	}
}
