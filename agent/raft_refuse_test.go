package agent

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestAgentRefusesCorruptRaftStore: a server agent whose raft.db is
// damaged stops with an error naming the file and what to do, and leaves
// the file as it was (issue 19: it used to panic or segfault).
func TestAgentRefusesCorruptRaftStore(t *testing.T) {
	tests := map[string][]byte{
		"zero-length": nil,
		"garbage":     bytes.Repeat([]byte("garbage!"), 4096),
	}
	for name, data := range tests {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, serverDirName, raftDirName, raftDBName)
			if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, data, 0o600); err != nil {
				t.Fatal(err)
			}
			a, err := NewAgent(persistentConfig(dir, true, false), discardLogger())
			if err == nil {
				_ = a.Shutdown()
				t.Fatal("NewAgent succeeded")
			}
			t.Logf("NewAgent: %v", err)
			for _, want := range []string{path, "corrupt", "backup"} {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error does not say %q", want)
				}
			}
			if after, _ := os.ReadFile(path); !bytes.Equal(after, data) {
				t.Error("the file was changed")
			}
		})
	}
}
