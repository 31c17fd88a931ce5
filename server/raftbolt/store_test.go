package raftbolt

import (
	"bytes"
	"errors"
	"path/filepath"
	"testing"

	"github.com/hashicorp/raft"
)

func openTemp(t *testing.T) (*Store, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "raft.db")
	s, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	return s, path
}

func TestLogStore(t *testing.T) {
	s, path := openTemp(t)
	if first, _ := s.FirstIndex(); first != 0 {
		t.Fatalf("empty FirstIndex = %d", first)
	}
	var logs []*raft.Log
	for i := uint64(1); i <= 10; i++ {
		logs = append(logs, &raft.Log{Index: i, Term: 2, Type: raft.LogCommand, Data: []byte{byte(i)}})
	}
	if err := s.StoreLogs(logs[:9]); err != nil {
		t.Fatal(err)
	}
	if err := s.StoreLog(logs[9]); err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteRange(1, 4); err != nil {
		t.Fatal(err)
	}
	// Reopen: what was written is there.
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()

	tests := []struct {
		name    string
		index   uint64
		wantErr error
	}{
		{"deleted", 4, raft.ErrLogNotFound},
		{"first kept", 5, nil},
		{"last", 10, nil},
		{"beyond", 11, raft.ErrLogNotFound},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var l raft.Log
			err := s.GetLog(tc.index, &l)
			if !errors.Is(err, tc.wantErr) {
				t.Fatalf("GetLog(%d) = %v, want %v", tc.index, err, tc.wantErr)
			}
			if err == nil && (l.Index != tc.index || l.Term != 2 || !bytes.Equal(l.Data, []byte{byte(tc.index)})) {
				t.Fatalf("GetLog(%d) = %+v", tc.index, l)
			}
		})
	}
	first, _ := s.FirstIndex()
	last, _ := s.LastIndex()
	if first != 5 || last != 10 {
		t.Fatalf("first, last = %d, %d; want 5, 10", first, last)
	}
}

func TestStableStore(t *testing.T) {
	s, _ := openTemp(t)
	defer s.Close()
	if _, err := s.Get([]byte("missing")); err == nil || err.Error() != "not found" {
		t.Fatalf("Get(missing) = %v, want the text raft expects", err)
	}
	if _, err := s.GetUint64([]byte("missing")); !errors.Is(err, ErrKeyNotFound) {
		t.Fatalf("GetUint64(missing) = %v", err)
	}
	if err := s.Set([]byte("k"), []byte("v")); err != nil {
		t.Fatal(err)
	}
	if v, err := s.Get([]byte("k")); err != nil || string(v) != "v" {
		t.Fatalf("Get = %q, %v", v, err)
	}
	if err := s.SetUint64([]byte("term"), 42); err != nil {
		t.Fatal(err)
	}
	if v, err := s.GetUint64([]byte("term")); err != nil || v != 42 {
		t.Fatalf("GetUint64 = %d, %v", v, err)
	}
	if _, err := s.GetUint64([]byte("k")); err == nil {
		t.Fatal("GetUint64 of a 1-byte value succeeded")
	}
}
