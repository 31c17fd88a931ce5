package docker

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

func TestLogPosition(t *testing.T) {
	dir := t.TempDir()
	id := "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
	if _, _, ok := readLogPosition(dir, id); ok {
		t.Fatal("position found before any was saved")
	}
	p, err := openLogPosition(dir, id)
	if err != nil {
		t.Fatal(err)
	}
	ts := time.Date(2026, 1, 1, 0, 0, 1, 123456789, time.UTC)
	for _, n := range []int{1, 12, 3} { // a shorter count overwrites a longer one
		if err := p.save(ts, n); err != nil {
			t.Fatal(err)
		}
	}
	p.close()
	last, atLast, ok := readLogPosition(dir, id)
	if !ok || !last.Equal(ts) || atLast != 3 {
		t.Fatalf("read %v, %d, %v", last, atLast, ok)
	}
	if _, _, ok := readLogPosition(dir, "another-container"); ok {
		t.Fatal("position of another container used")
	}
	if err := os.WriteFile(filepath.Join(dir, logPositionFile), []byte("garbage"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, _, ok := readLogPosition(dir, id); ok {
		t.Fatal("garbage read as a position")
	}
	if p, err := openLogPosition("", id); p != nil || err != nil || p.save(ts, 1) != nil {
		t.Fatal("no task dir must record nothing")
	}
}
