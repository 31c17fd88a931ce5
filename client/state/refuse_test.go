package state

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"
)

// writeRawBolt creates a bbolt file at StatePath(dataDir) filled by fill.
func writeRawBolt(t *testing.T, dataDir string, fill func(tx *bolt.Tx) error) string {
	t.Helper()
	path := StatePath(dataDir)
	mustNil(t, os.MkdirAll(filepath.Dir(path), 0o700))
	db, err := bolt.Open(path, 0o600, nil)
	mustNil(t, err)
	mustNil(t, db.Update(fill))
	mustNil(t, db.Close())
	return path
}

// bigStateFile writes a current-schema file spanning many pages.
func bigStateFile(t *testing.T, dataDir string) string {
	t.Helper()
	db := openTestBolt(t, dataDir)
	for i := range 60 {
		a := testAlloc(strings.Repeat("x", 8) + string(rune('A'+i)))
		a.DesiredDescription = strings.Repeat("padding ", 200)
		mustNil(t, db.PutAllocation(a))
	}
	mustNil(t, db.Close())
	return db.Path()
}

// assertRefused opens dataDir, expects an error of kind want naming the
// file and containing every text in wantText, and checks that the file's
// bytes did not change and no other file appeared.
func assertRefused(t *testing.T, dataDir string, want error, wantText ...string) {
	t.Helper()
	path := StatePath(dataDir)
	before, err := os.ReadFile(path)
	mustNil(t, err)
	entriesBefore, _ := os.ReadDir(filepath.Dir(path))

	db, err := openBoltStateDB(dataDir, nil, 100*time.Millisecond)
	if err == nil {
		_ = db.Close()
		t.Fatal("open succeeded")
	}
	t.Logf("open: %v", err)
	if !errors.Is(err, want) {
		t.Errorf("err = %v, want %v", err, want)
	}
	for _, s := range append([]string{path}, wantText...) {
		if !strings.Contains(err.Error(), s) {
			t.Errorf("error %q does not contain %q", err, s)
		}
	}
	after, err := os.ReadFile(path)
	mustNil(t, err)
	if !bytes.Equal(before, after) {
		t.Error("refused file was modified")
	}
	if entriesAfter, _ := os.ReadDir(filepath.Dir(path)); len(entriesAfter) != len(entriesBefore) {
		t.Errorf("directory had %d entries, now %d", len(entriesBefore), len(entriesAfter))
	}
}

func TestBoltRefusesNewerSchema(t *testing.T) {
	for _, version := range []string{"3", "17"} {
		t.Run(version, func(t *testing.T) {
			dir := t.TempDir()
			writeRawBolt(t, dir, func(tx *bolt.Tx) error {
				mustNil(t, initSchema(tx))
				return tx.Bucket(metaBucket).Put(versionKey, []byte(version))
			})
			assertRefused(t, dir, ErrSchemaTooNew,
				"schema version "+version, "version 2 supported",
				"downgrade is not supported: upgrade drover, or move the file aside with `drover agent -state-move-aside`")
		})
	}
}

func TestBoltRefusesCorruptFiles(t *testing.T) {
	tests := []struct {
		name string
		make func(t *testing.T, dataDir string)
	}{
		{"text file", func(t *testing.T, dataDir string) {
			mustNil(t, os.MkdirAll(filepath.Join(dataDir, "client"), 0o700))
			mustNil(t, os.WriteFile(StatePath(dataDir), []byte("hello, I am not a database\n"), 0o600))
		}},
		{"random bytes", func(t *testing.T, dataDir string) {
			garbage := make([]byte, 64<<10)
			r := rand.New(rand.NewPCG(1, 2))
			for i := range garbage {
				garbage[i] = byte(r.Uint32())
			}
			mustNil(t, os.MkdirAll(filepath.Join(dataDir, "client"), 0o700))
			mustNil(t, os.WriteFile(StatePath(dataDir), garbage, 0o600))
		}},
		{"truncated to half", func(t *testing.T, dataDir string) {
			path := bigStateFile(t, dataDir)
			info, err := os.Stat(path)
			mustNil(t, err)
			mustNil(t, os.Truncate(path, info.Size()/2))
		}},
		{"truncated to three pages", func(t *testing.T, dataDir string) {
			mustNil(t, os.Truncate(bigStateFile(t, dataDir), 3*4096))
		}},
		{"truncated to 100 bytes", func(t *testing.T, dataDir string) {
			mustNil(t, os.Truncate(bigStateFile(t, dataDir), 100))
		}},
		{"meta pages overwritten", func(t *testing.T, dataDir string) {
			path := bigStateFile(t, dataDir)
			f, err := os.OpenFile(path, os.O_WRONLY, 0)
			mustNil(t, err)
			_, err = f.WriteAt(bytes.Repeat([]byte{0xAB}, 2*4096), 0)
			mustNil(t, err)
			mustNil(t, f.Close())
		}},
		{"data page overwritten", func(t *testing.T, dataDir string) {
			path := bigStateFile(t, dataDir)
			f, err := os.OpenFile(path, os.O_WRONLY, 0)
			mustNil(t, err)
			// Pages 2 and up hold the tree; garble several of them.
			_, err = f.WriteAt(bytes.Repeat([]byte{0xFF}, 8*4096), 2*4096)
			mustNil(t, err)
			mustNil(t, f.Close())
		}},
		{"bbolt file of another program", func(t *testing.T, dataDir string) {
			writeRawBolt(t, dataDir, func(tx *bolt.Tx) error {
				b, err := tx.CreateBucket([]byte("widgets"))
				mustNil(t, err)
				return b.Put([]byte("k"), []byte("v"))
			})
		}},
		{"version not a number", func(t *testing.T, dataDir string) {
			writeRawBolt(t, dataDir, func(tx *bolt.Tx) error {
				mustNil(t, initSchema(tx))
				return tx.Bucket(metaBucket).Put(versionKey, []byte("two"))
			})
		}},
		{"current version without its buckets", func(t *testing.T, dataDir string) {
			writeRawBolt(t, dataDir, func(tx *bolt.Tx) error {
				mustNil(t, initSchema(tx))
				return tx.DeleteBucket(allocationsBucket)
			})
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			tc.make(t, dir)
			assertRefused(t, dir, ErrCorrupt, "is corrupt", "left untouched", "drover agent -state-move-aside")
		})
	}
}

func TestBoltEmptyFileIsNew(t *testing.T) {
	// A file created but never formatted (a crash right after creation)
	// holds nothing to lose: it is formatted.
	dir := t.TempDir()
	mustNil(t, os.MkdirAll(filepath.Join(dir, "client"), 0o700))
	mustNil(t, os.WriteFile(StatePath(dir), nil, 0o600))
	db := openTestBolt(t, dir)
	mustNil(t, db.PutNodeIdentity(&NodeIdentity{ID: "n"}))
}

// TestBoltEmptyStateFile: a state file of zero bytes is a new node's only
// when the alloc dir holds no allocation; with allocations it is refused
// as corrupt (a new node would run their tasks a second time), naming the
// file and the way out, and moving it aside lets the agent start afresh.
func TestBoltEmptyStateFile(t *testing.T) {
	tests := []struct {
		name     string
		allocDir string // relative to the data dir; "" is the default "alloc"
		setup    func(t *testing.T, allocDir string)
		refused  bool
	}{
		{name: "no alloc dir"},
		{name: "empty alloc dir", setup: func(t *testing.T, dir string) { mustNil(t, os.MkdirAll(dir, 0o755)) }},
		{name: "alloc dir with files only", setup: func(t *testing.T, dir string) {
			mustNil(t, os.MkdirAll(dir, 0o755))
			mustNil(t, os.WriteFile(filepath.Join(dir, "README"), nil, 0o644))
		}},
		{name: "an allocation", refused: true, setup: func(t *testing.T, dir string) {
			mustNil(t, os.MkdirAll(filepath.Join(dir, "6a1b0c2d-0000-4000-8000-000000000001", "alloc"), 0o755))
		}},
		{name: "an allocation in a configured alloc dir", allocDir: "elsewhere", refused: true, setup: func(t *testing.T, dir string) {
			mustNil(t, os.MkdirAll(filepath.Join(dir, "6a1b0c2d-0000-4000-8000-000000000001"), 0o755))
		}},
		{name: "allocations only under another dir", allocDir: "elsewhere", setup: func(t *testing.T, dir string) {
			mustNil(t, os.MkdirAll(filepath.Join(filepath.Dir(dir), "alloc", "6a1b0c2d-0000-4000-8000-000000000001"), 0o755))
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dataDir := t.TempDir()
			allocDir := filepath.Join(dataDir, "alloc")
			var opts []Option
			if tt.allocDir != "" {
				allocDir = filepath.Join(dataDir, tt.allocDir)
				opts = append(opts, WithAllocDir(allocDir))
			}
			if tt.setup != nil {
				tt.setup(t, allocDir)
			}
			path := StatePath(dataDir)
			mustNil(t, os.MkdirAll(filepath.Dir(path), 0o700))
			mustNil(t, os.WriteFile(path, nil, 0o600))

			db, err := openBoltStateDB(dataDir, nil, 100*time.Millisecond, opts...)
			if !tt.refused {
				if err != nil {
					t.Fatalf("open: %v", err)
				}
				id, err := db.GetNodeIdentity()
				mustNil(t, err)
				mustNil(t, db.Close())
				if id.ID != "" {
					t.Errorf("a new file holds identity %+v", id)
				}
				return
			}
			if err == nil {
				_ = db.Close()
				t.Fatal("open of an empty state file beside allocations succeeded")
			}
			t.Logf("open: %v", err)
			if !errors.Is(err, ErrCorrupt) {
				t.Errorf("err = %v, want ErrCorrupt", err)
			}
			for _, s := range []string{path, "empty", allocDir, "-" + MoveAsideFlag} {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("error %q does not contain %q", err, s)
				}
			}
			if info, err := os.Stat(path); err != nil || info.Size() != 0 {
				t.Errorf("the refused file changed: %v, %v", info, err)
			}
			if _, err := MoveAside(dataDir, time.Now()); err != nil {
				t.Fatalf("move aside: %v", err)
			}
			db, err = openBoltStateDB(dataDir, nil, 100*time.Millisecond, opts...)
			if err != nil {
				t.Fatalf("open after moving the file aside: %v", err)
			}
			mustNil(t, db.Close())
		})
	}
}
