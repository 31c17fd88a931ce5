package raftbolt

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/raft"
	bolt "go.etcd.io/bbolt"
)

// writeStore makes a store at dir/raft.db holding entries 1..n and
// returns its path and bytes.
func writeStore(t *testing.T, dir string, n int) (string, []byte) {
	t.Helper()
	path := filepath.Join(dir, "raft.db")
	s, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	var logs []*raft.Log
	for i := 1; i <= n; i++ {
		logs = append(logs, &raft.Log{Index: uint64(i), Term: 1, Type: raft.LogCommand, Data: bytes.Repeat([]byte{byte(i)}, 300)})
	}
	if err := s.StoreLogs(logs); err != nil {
		t.Fatal(err)
	}
	if err := s.SetUint64([]byte("CurrentTerm"), 1); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return path, b
}

// assertRefused opens path, expects an error of kind want naming the file
// and saying what to do, and checks that the file and its directory did
// not change.
func assertRefused(t *testing.T, path string, want error) {
	t.Helper()
	before, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	entries, _ := os.ReadDir(filepath.Dir(path))
	s, err := open(path, 100*time.Millisecond)
	if err == nil {
		_ = s.Close()
		t.Fatal("open succeeded")
	}
	t.Logf("open: %v", err)
	if !errors.Is(err, want) {
		t.Errorf("err = %v, want %v", err, want)
	}
	if !strings.Contains(err.Error(), path) {
		t.Errorf("error does not name %s", path)
	}
	if want == ErrCorrupt && !strings.Contains(err.Error(), "backup") {
		t.Errorf("error does not say what to do")
	}
	after, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(before, after) {
		t.Error("refused file was modified")
	}
	if now, _ := os.ReadDir(filepath.Dir(path)); len(now) != len(entries) {
		t.Errorf("directory had %d entries, now %d", len(entries), len(now))
	}
}

func TestOpenRefusesDamagedFiles(t *testing.T) {
	_, good := writeStore(t, t.TempDir(), 2000)
	const page = 4096
	tests := []struct {
		name string
		data func() []byte
	}{
		{"zero-length", func() []byte { return nil }},
		{"a few bytes of text", func() []byte { return []byte("not a raft store") }},
		{"two pages of garbage", func() []byte { return randomBytes(2*page, 1) }},
		{"a megabyte of garbage", func() []byte { return randomBytes(1<<20, 2) }},
		{"zeros", func() []byte { return make([]byte, 64*page) }},
		{"cut to half", func() []byte { return good[:len(good)/2] }},
		{"cut after the meta pages", func() []byte { return good[:2*page] }},
		{"cut to five pages", func() []byte { return good[:5*page] }},
		{"both meta pages damaged", func() []byte {
			c := bytes.Clone(good)
			for _, off := range []int{64, page + 64} {
				c[off] ^= 0xff
			}
			return c
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "raft.db")
			if err := os.WriteFile(path, tt.data(), 0o600); err != nil {
				t.Fatal(err)
			}
			assertRefused(t, path, ErrCorrupt)
		})
	}
}

// TestOpenRefusesGapsAndBadEntries: damage bbolt cannot see (its pages
// are sound) but raft would panic on at start-up.
func TestOpenRefusesGapsAndBadEntries(t *testing.T) {
	tests := []struct {
		name string
		fill func(b *bolt.Bucket) error
	}{
		{"a gap in the indexes", func(b *bolt.Bucket) error { return b.Delete(indexKey(7)) }},
		{"an entry that does not decode", func(b *bolt.Bucket) error { return b.Put(indexKey(7), []byte{0xc1, 0xc1}) }},
		{"a key that is not an index", func(b *bolt.Bucket) error { return b.Put([]byte("x"), []byte{0x80}) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path, _ := writeStore(t, t.TempDir(), 10)
			db, err := bolt.Open(path, 0o600, nil)
			if err != nil {
				t.Fatal(err)
			}
			if err := db.Update(func(tx *bolt.Tx) error { return tt.fill(tx.Bucket(bucketLogs)) }); err != nil {
				t.Fatal(err)
			}
			if err := db.Close(); err != nil {
				t.Fatal(err)
			}
			assertRefused(t, path, ErrCorrupt)
		})
	}
}

// TestOpenNeverCrashesOnDamage flips bytes in the pages a store uses:
// each open either refuses the file or gives a store whose every entry
// reads back or fails with an error. A panic or a fault fails the whole
// test binary.
func TestOpenNeverCrashesOnDamage(t *testing.T) {
	dir := t.TempDir()
	path, good := writeStore(t, dir, 500)
	db, err := bolt.Open(path, 0o600, &bolt.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	var used int
	_ = db.View(func(tx *bolt.Tx) error { used = int(tx.Size()); return nil })
	_ = db.Close()
	rng := rand.New(rand.NewPCG(7, 11))
	refused := 0
	rounds := 300
	if testing.Short() {
		rounds = 30
	}
	for i := range rounds {
		c := bytes.Clone(good)
		for range 1 + rng.IntN(4) {
			c[rng.IntN(used)] ^= byte(1 + rng.IntN(255))
		}
		path := filepath.Join(dir, "damaged.db")
		if err := os.WriteFile(path, c, 0o600); err != nil {
			t.Fatal(err)
		}
		s, err := open(path, 100*time.Millisecond)
		if err != nil {
			if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("round %d: %v, want ErrCorrupt", i, err)
			}
			refused++
			continue
		}
		first, _ := s.FirstIndex()
		last, _ := s.LastIndex()
		for idx := first; idx <= last && idx != 0; idx++ {
			var l raft.Log
			_ = s.GetLog(idx, &l)
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
	}
	t.Logf("%d of %d damaged files refused; the others' damage was in free pages or entry data", refused, rounds)
}

func TestOpenRefusesLockedFile(t *testing.T) {
	path, _ := writeStore(t, t.TempDir(), 3)
	s, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	assertRefused(t, path, ErrLocked)
}

// TestCreateIsWhole: a new store appears only once complete, and a
// half-made one left by a crash is replaced.
func TestCreateIsWhole(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "raft.db")
	if err := os.WriteFile(path+".new", []byte("half made"), 0o600); err != nil {
		t.Fatal(err)
	}
	s, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 || entries[0].Name() != "raft.db" {
		t.Fatalf("directory = %v, want only raft.db", entries)
	}
	if s, err = Open(path); err != nil {
		t.Fatalf("reopen: %v", err)
	}
	_ = s.Close()
}

func randomBytes(n int, seed uint64) []byte {
	rng := rand.New(rand.NewPCG(seed, seed))
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(rng.Uint32())
	}
	return b
}
