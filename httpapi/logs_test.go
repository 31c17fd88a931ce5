package httpapi

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/drover-io/drover/drivers/shared/logrotate"
)

// writeLines writes lines from..to-1 ("line 0000\n", 10 bytes each).
func writeLines(t *testing.T, w io.Writer, from, to int) string {
	t.Helper()
	var all strings.Builder
	for i := from; i < to; i++ {
		line := fmt.Sprintf("line %04d\n", i)
		if _, err := io.WriteString(w, line); err != nil {
			t.Fatal(err)
		}
		all.WriteString(line)
	}
	return all.String()
}

// newRotatingLog opens web.stdout in dir's alloc/logs with small files.
func newRotatingLog(t *testing.T, root string, maxFiles int) *logrotate.FileRotator {
	t.Helper()
	r, err := logrotate.NewFileRotator(filepath.Join(root, "alloc", "logs"), "web.stdout", maxFiles, 256)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = r.Close() })
	return r
}

// decodeFrames returns the frames of a JSON log stream.
func decodeFrames(t *testing.T, body string) []streamFrame {
	t.Helper()
	var out []streamFrame
	dec := json.NewDecoder(strings.NewReader(body))
	for {
		var f streamFrame
		if err := dec.Decode(&f); errors.Is(err, io.EOF) {
			return out
		} else if err != nil {
			t.Fatalf("decode frame: %v", err)
		}
		out = append(out, f)
	}
}

func TestLogsAcrossRotation(t *testing.T) {
	nc := &fakeNodeClient{}
	ts, _, root := newOpsServer(t, nc, true)
	rot := newRotatingLog(t, root, 1000)
	want := writeLines(t, rot, 0, 500)
	if err := rot.Flush(); err != nil {
		t.Fatal(err)
	}
	files, _ := logrotate.Files(filepath.Join(root, "alloc", "logs"), "web.stdout")
	if len(files) < 10 {
		t.Fatalf("only %d log files: the test needs rotation", len(files))
	}

	t.Run("plain", func(t *testing.T) {
		code, body, hdr := do(t, "GET", ts.URL+"/v1/client/fs/logs/local-1?task=web&type=stdout&plain=true", "")
		if code != 200 || body != want {
			t.Fatalf("plain logs = %d, %d bytes (want %d); first difference at line %d", code, len(body), len(want), firstDiffLine(body, want))
		}
		if !strings.HasPrefix(hdr.Get("Content-Type"), "text/plain") {
			t.Errorf("Content-Type = %q", hdr.Get("Content-Type"))
		}
	})
	t.Run("frames", func(t *testing.T) {
		// The task is the group's only one: ?task may be left out.
		code, body, _ := do(t, "GET", ts.URL+"/v1/client/fs/logs/local-1?type=stdout", "")
		if code != 200 {
			t.Fatalf("logs = %d %q", code, body)
		}
		var got bytes.Buffer
		lastFile, lastOffset := "", int64(0)
		for _, f := range decodeFrames(t, body) {
			got.Write(f.Data)
			if !strings.HasPrefix(f.File, "alloc/logs/web.stdout.") {
				t.Fatalf("frame file %q", f.File)
			}
			if f.File == lastFile && f.Offset <= lastOffset {
				t.Errorf("offset went back in %s: %d after %d", f.File, f.Offset, lastOffset)
			}
			lastFile, lastOffset = f.File, f.Offset
		}
		if got.String() != want {
			t.Fatalf("frames hold %d bytes, want %d; first difference at line %d", got.Len(), len(want), firstDiffLine(got.String(), want))
		}
	})
	t.Run("offset from start across files", func(t *testing.T) {
		_, body, _ := do(t, "GET", ts.URL+"/v1/client/fs/logs/local-1?task=web&type=stdout&plain=true&offset=2500", "")
		if body != want[2500:] {
			t.Errorf("from offset 2500: %d bytes, want %d", len(body), len(want)-2500)
		}
	})
	t.Run("origin end", func(t *testing.T) {
		_, body, _ := do(t, "GET", ts.URL+"/v1/client/fs/logs/local-1?task=web&type=stdout&plain=true&origin=end&offset=30", "")
		if body != "line 0497\nline 0498\nline 0499\n" {
			t.Errorf("tail = %q", body)
		}
		_, body, _ = do(t, "GET", ts.URL+"/v1/client/fs/logs/local-1?task=web&type=stdout&plain=true&origin=end&offset=999999", "")
		if body != want {
			t.Errorf("offset beyond the start: %d bytes, want all %d", len(body), len(want))
		}
	})
	t.Run("stderr empty", func(t *testing.T) {
		code, body, _ := do(t, "GET", ts.URL+"/v1/client/fs/logs/local-1?task=web&type=stderr", "")
		if code != 200 || body != "" {
			t.Errorf("stderr = %d %q", code, body)
		}
	})
}

func firstDiffLine(got, want string) int {
	g, w := strings.Split(got, "\n"), strings.Split(want, "\n")
	for i := range min(len(g), len(w)) {
		if g[i] != w[i] {
			return i
		}
	}
	return min(len(g), len(w))
}

// followReader reads a followed log stream in the background and signals
// each read on changed.
type followReader struct {
	changed chan struct{} // a value after each read, if there is room

	mu     sync.Mutex // guards the fields below
	data   bytes.Buffer
	files  []string
	err    error
	closed bool
}

func newFollowReader() *followReader {
	return &followReader{changed: make(chan struct{}, 1)}
}

func (r *followReader) signal() {
	select {
	case r.changed <- struct{}{}:
	default:
	}
}

// read decodes JSON stream frames until the stream ends.
func (r *followReader) read(body io.Reader) {
	defer r.signal()
	dec := json.NewDecoder(body)
	for {
		var f streamFrame
		err := dec.Decode(&f)
		r.mu.Lock()
		if err != nil {
			r.err, r.closed = err, true
			r.mu.Unlock()
			return
		}
		r.data.Write(f.Data)
		if f.File != "" && (len(r.files) == 0 || r.files[len(r.files)-1] != f.File) {
			r.files = append(r.files, f.File)
		}
		r.mu.Unlock()
		r.signal()
	}
}

// readPlain reads a plain (plain=true) stream until it ends.
func (r *followReader) readPlain(body io.Reader) {
	defer r.signal()
	buf := make([]byte, 4096)
	for {
		n, err := body.Read(buf)
		r.mu.Lock()
		r.data.Write(buf[:n])
		if err != nil {
			r.closed = true
			r.mu.Unlock()
			return
		}
		r.mu.Unlock()
		r.signal()
	}
}

func (r *followReader) snapshot() (string, []string, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.data.String(), append([]string(nil), r.files...), r.closed
}

// await waits until cond holds of what was read, looking after each read.
// The bound only ends a test that hangs; nothing here depends on it.
func (r *followReader) await(t *testing.T, what string, cond func(got string) bool) {
	t.Helper()
	bound := time.NewTimer(2 * time.Minute)
	defer bound.Stop()
	for {
		got, _, closed := r.snapshot()
		if cond(got) {
			return
		}
		if closed {
			t.Fatalf("the stream ended before %s", what)
		}
		select {
		case <-r.changed:
		case <-bound.C:
			t.Fatalf("no %s after two minutes", what)
		}
	}
}

func TestLogsFollowAcrossRotation(t *testing.T) {
	for _, plain := range []bool{false, true} {
		t.Run(fmt.Sprintf("plain=%v", plain), func(t *testing.T) {
			nc := &fakeNodeClient{}
			ts, _, root := newOpsServer(t, nc, true)
			rot := newRotatingLog(t, root, 200)
			want := writeLines(t, rot, 0, 100)

			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			url := fmt.Sprintf("%s/v1/client/fs/logs/local-1?task=web&type=stdout&follow=true&plain=%v", ts.URL, plain)
			req, _ := http.NewRequestWithContext(ctx, "GET", url, nil)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			r := newFollowReader()
			done := make(chan struct{})
			go func() {
				defer close(done)
				if plain {
					r.readPlain(resp.Body)
					return
				}
				r.read(resp.Body)
			}()
			r.await(t, "the lines written before", func(got string) bool { return got == want })
			// Written after the stream reached the end: several rotations.
			want += writeLines(t, rot, 100, 400)
			r.await(t, "the lines written after rotation", func(got string) bool { return len(got) >= len(want) })
			got, files, closed := r.snapshot()
			if got != want {
				t.Fatalf("followed %d bytes, want %d; first difference at line %d", len(got), len(want), firstDiffLine(got, want))
			}
			if closed {
				t.Fatalf("stream closed while following")
			}
			if !plain && len(files) < 10 {
				t.Errorf("frames came from %d files, want the rotated ones: %v", len(files), files)
			}
			// The client goes away: the handler must return (ts.Close at
			// cleanup waits for it).
			cancel()
			<-done
		})
	}
}

func TestLogsWaitForFirstFile(t *testing.T) {
	nc := &fakeNodeClient{}
	ts, _, root := newOpsServer(t, nc, true)
	if err := os.MkdirAll(filepath.Join(root, "alloc", "logs"), 0o755); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", ts.URL+"/v1/client/fs/logs/local-1?task=web&type=stdout&follow=true", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	r := newFollowReader()
	done := make(chan struct{})
	go func() { defer close(done); r.read(resp.Body) }()
	rot := newRotatingLog(t, root, 10)
	want := writeLines(t, rot, 0, 3)
	r.await(t, "the first lines", func(got string) bool { return got == want })
	cancel()
	<-done
}

func TestLogsRequestErrors(t *testing.T) {
	ts, _, _ := newOpsServer(t, &fakeNodeClient{}, true)
	tests := []struct {
		path     string
		wantCode int
		wantBody string
	}{
		{"/v1/client/fs/logs/local-2?type=stdout", 400, "has 2 tasks (a, b): name one with ?task="},
		{"/v1/client/fs/logs/local-1?task=nope&type=stdout", 404, `task "nope" not found`},
		{"/v1/client/fs/logs/local-1?task=web&type=stdin", 400, `type="stdin" is invalid`},
		{"/v1/client/fs/logs/local-1?task=web&origin=middle", 400, `origin="middle" is invalid`},
		{"/v1/client/fs/logs/local-1?task=web&offset=x", 400, `offset="x" is invalid`},
		{"/v1/client/fs/logs/local-1?task=web&follow=perhaps", 400, "follow"},
		{"/v1/client/fs/logs/local-1?task=../web", 400, "not a task name"},
		{"/v1/client/fs/logs/remote-1?task=web", 502, "which the servers no longer know"},
		{"/v1/client/fs/logs/zzz?task=web", 404, `allocation "zzz" not found`},
	}
	for _, tt := range tests {
		code, body, _ := do(t, "GET", ts.URL+tt.path, "")
		if code != tt.wantCode || !strings.Contains(body, tt.wantBody) {
			t.Errorf("GET %s = %d %q, want %d with %q", tt.path, code, body, tt.wantCode, tt.wantBody)
		}
	}
}
