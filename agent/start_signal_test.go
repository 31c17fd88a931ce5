package agent

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/hashicorp/raft"

	"github.com/drover-io/drover/server/raftbolt"
)

// TestSignalWhileWaitingForLeadership: a combined agent whose server can
// never win an election (its raft configuration names a second voter that
// does not exist) waits for leadership instead of exiting after 10 s, with
// its client already started; a signal ends the wait, and the agent stops
// cleanly.
func TestSignalWhileWaitingForLeadership(t *testing.T) {
	dir := t.TempDir()
	const id = "lonely-server"
	serverDir := filepath.Join(dir, serverDirName)
	raftDir := filepath.Join(serverDir, raftDirName)
	if err := os.MkdirAll(raftDir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(serverDir, nodeIDFileName), []byte(id+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	store, err := raftbolt.Open(filepath.Join(raftDir, raftDBName))
	if err != nil {
		t.Fatal(err)
	}
	snaps, err := raft.NewFileSnapshotStore(raftDir, snapshotsRetained, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	_, trans := raft.NewInmemTransport(id)
	rc := raft.DefaultConfig()
	rc.LocalID = id
	err = raft.BootstrapCluster(rc, store, store, snaps, trans, raft.Configuration{Servers: []raft.Server{
		{Suffrage: raft.Voter, ID: id, Address: id},
		{Suffrage: raft.Voter, ID: "absent", Address: "absent"},
	}})
	_ = trans.Close()
	if cerr := store.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		t.Fatal(err)
	}

	signals := make(chan os.Signal, 1)
	signals <- syscall.SIGTERM // the only way out: leadership never comes
	var stdout, stderr syncBuffer
	code := runCommand([]string{"-config", writeConfig(t, dir)}, &stdout, &stderr, signals, nil)
	if code != 1 {
		t.Fatalf("exit code = %d, want 1; stderr:\n%s", code, stderr.String())
	}
	if !strings.Contains(stdout.String(), "while starting") || !strings.Contains(stderr.String(), "caught signal") {
		t.Fatalf("stdout:\n%s\nstderr:\n%s", stdout.String(), stderr.String())
	}
}
