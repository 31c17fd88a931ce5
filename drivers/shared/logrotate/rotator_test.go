package logrotate

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// contents returns the files of base in dir by name, and their order.
func contents(t *testing.T, dir, base string) (map[string]string, []string) {
	t.Helper()
	paths, err := Files(dir, base)
	if err != nil {
		t.Fatalf("Files: %v", err)
	}
	got := map[string]string{}
	var names []string
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatalf("read %s: %v", p, err)
		}
		got[filepath.Base(p)] = string(b)
		names = append(names, filepath.Base(p))
	}
	return got, names
}

func TestRotation(t *testing.T) {
	tests := []struct {
		name     string
		maxFiles int
		maxSize  int64
		writes   []string
		want     map[string]string
	}{
		{
			name: "fits in one file", maxFiles: 3, maxSize: 10,
			writes: []string{"abc\n", "def\n"},
			want:   map[string]string{"out.0": "abc\ndef\n"},
		},
		{
			name: "exactly full stays in the file", maxFiles: 3, maxSize: 8,
			writes: []string{"abc\n", "def\n"},
			want:   map[string]string{"out.0": "abc\ndef\n"},
		},
		{
			name: "split at the last line break that fits", maxFiles: 3, maxSize: 10,
			writes: []string{"aaa\nbbb\nccc\n"},
			want:   map[string]string{"out.0": "aaa\nbbb\n", "out.1": "ccc\n"},
		},
		{
			name: "a whole line moves to the next file", maxFiles: 3, maxSize: 10,
			writes: []string{"aaaaaa\n", "bbbbbb\n"},
			want:   map[string]string{"out.0": "aaaaaa\n", "out.1": "bbbbbb\n"},
		},
		{
			name: "a line longer than a file is split", maxFiles: 5, maxSize: 4,
			writes: []string{"0123456789\n"},
			want:   map[string]string{"out.0": "0123", "out.1": "4567", "out.2": "89\n"},
		},
		{
			name: "a partial line fills the file", maxFiles: 3, maxSize: 6,
			writes: []string{"abc", "defghi\n"},
			want:   map[string]string{"out.0": "abcdef", "out.1": "ghi\n"},
		},
		{
			name: "only the newest max files are kept", maxFiles: 2, maxSize: 4,
			writes: []string{"aaa\n", "bbb\n", "ccc\n", "ddd\n"},
			want:   map[string]string{"out.2": "ccc\n", "out.3": "ddd\n"},
		},
		{
			name: "one file", maxFiles: 1, maxSize: 4,
			writes: []string{"aaa\nbbb\nccc\n"},
			want:   map[string]string{"out.2": "ccc\n"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			r, err := NewFileRotator(dir, "out", tt.maxFiles, tt.maxSize)
			if err != nil {
				t.Fatal(err)
			}
			for _, w := range tt.writes {
				n, err := r.Write([]byte(w))
				if err != nil || n != len(w) {
					t.Fatalf("Write(%q) = %d, %v", w, n, err)
				}
			}
			if err := r.Close(); err != nil {
				t.Fatal(err)
			}
			got, _ := contents(t, dir, "out")
			if fmt.Sprint(got) != fmt.Sprint(tt.want) {
				t.Errorf("files = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestAppendAfterRestart(t *testing.T) {
	tests := []struct {
		name    string
		maxSize int64
		first   string
		second  string
		want    map[string]string
	}{
		{"appends to the last file with room", 20, "one\n", "two\n",
			map[string]string{"out.0": "one\ntwo\n"}},
		{"starts the next file when the last is full", 4, "one\n", "two\n",
			map[string]string{"out.0": "one\n", "out.1": "two\n"}},
		{"continues after rotated files", 8, "aaa\nbbb\nccc\n", "ddd\n",
			map[string]string{"out.0": "aaa\nbbb\n", "out.1": "ccc\nddd\n"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			for _, w := range []string{tt.first, tt.second} {
				r, err := NewFileRotator(dir, "out", 10, tt.maxSize)
				if err != nil {
					t.Fatal(err)
				}
				if _, err := r.Write([]byte(w)); err != nil {
					t.Fatal(err)
				}
				if err := r.Close(); err != nil {
					t.Fatal(err)
				}
			}
			got, _ := contents(t, dir, "out")
			if fmt.Sprint(got) != fmt.Sprint(tt.want) {
				t.Errorf("files = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestConcurrentWritersLoseNothing(t *testing.T) {
	const writers, lines = 8, 2000
	dir := t.TempDir()
	r, err := NewFileRotator(dir, "out", 1000000, 4096)
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			for i := range lines {
				line := fmt.Sprintf("writer %d line %05d %s\n", w, i, strings.Repeat("x", i%50))
				if _, err := r.Write([]byte(line)); err != nil {
					t.Errorf("write: %v", err)
					return
				}
			}
		})
	}
	wg.Wait()
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	got, names := contents(t, dir, "out")
	if len(names) < 2 {
		t.Fatalf("expected rotations, got files %v", names)
	}
	next := make([]int, writers) // next line expected per writer
	for _, name := range names {
		body := got[name]
		if int64(len(body)) > 4096 {
			t.Errorf("%s has %d bytes, over the limit", name, len(body))
		}
		if !strings.HasSuffix(body, "\n") {
			t.Errorf("%s does not end with a whole line", name)
		}
		for _, line := range strings.Split(strings.TrimSuffix(body, "\n"), "\n") {
			var w, i int
			if _, err := fmt.Sscanf(line, "writer %d line %d", &w, &i); err != nil {
				t.Fatalf("%s: mangled line %q", name, line)
			}
			if i != next[w] {
				t.Fatalf("writer %d: got line %d, want %d", w, i, next[w])
			}
			next[w]++
		}
	}
	for w, n := range next {
		if n != lines {
			t.Errorf("writer %d: %d lines found, want %d", w, n, lines)
		}
	}
}

func TestFilesOrderAndNames(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{"out.10", "out.2", "out.0", "out.01", "out.x", "out.", "other.1", "out.3.tmp"} {
		if err := os.WriteFile(filepath.Join(dir, name), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := Files(dir, "out")
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"out.0", "out.2", "out.10"}
	for i := range want {
		want[i] = filepath.Join(dir, want[i])
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("Files = %v, want %v", got, want)
	}
	if got, err := Files(filepath.Join(dir, "missing"), "out"); err != nil || len(got) != 0 {
		t.Errorf("Files(missing dir) = %v, %v; want none, nil", got, err)
	}
}

func TestInvalidLimitsAndClosed(t *testing.T) {
	dir := t.TempDir()
	if _, err := NewFileRotator(dir, "out", 0, 10); err == nil {
		t.Error("maxFiles 0: want an error")
	}
	if _, err := NewFileRotator(dir, "out", 1, 0); err == nil {
		t.Error("maxSize 0: want an error")
	}
	r, err := NewFileRotator(dir, "out", 1, 10)
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	if err := r.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	if _, err := r.Write([]byte("x")); err == nil {
		t.Error("Write after Close: want an error")
	}
}

func BenchmarkFileRotatorWrite(b *testing.B) {
	r, err := NewFileRotator(b.TempDir(), "out", 3, 1<<20)
	if err != nil {
		b.Fatal(err)
	}
	line := []byte(strings.Repeat("x", 99) + "\n")
	b.SetBytes(int64(len(line)))
	for b.Loop() {
		if _, err := r.Write(line); err != nil {
			b.Fatal(err)
		}
	}
	if err := r.Close(); err != nil {
		b.Fatal(err)
	}
}
