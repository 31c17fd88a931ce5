package docker

import (
	"context"
	"crypto/tls"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

func TestNegotiate(t *testing.T) {
	cases := []struct {
		server, serverMin, want string
		wantErr                 bool
	}{
		{"1.41", "1.12", "1.41", false},
		{"1.40", "", "1.40", false},
		{"1.51", "1.44", "1.47", false},
		{"1.51", "1.48", "", true},
		{"1.39", "1.12", "", true},
		{"", "", "", true},
	}
	for _, tc := range cases {
		got, err := negotiate(tc.server, tc.serverMin)
		if (err != nil) != tc.wantErr || got != tc.want {
			t.Errorf("negotiate(%q, %q) = %q, %v; want %q, err %v", tc.server, tc.serverMin, got, err, tc.want, tc.wantErr)
		}
	}
}

func TestCompareVersions(t *testing.T) {
	cases := []struct {
		a, b string
		want int
	}{
		{"1.41", "1.41", 0}, {"1.9", "1.41", -1}, {"1.41", "1.9", 1}, {"2", "1.99", 1}, {"1.41.1", "1.41", 1},
	}
	for _, tc := range cases {
		if got := compareVersions(tc.a, tc.b); got != tc.want {
			t.Errorf("compareVersions(%q, %q) = %d, want %d", tc.a, tc.b, got, tc.want)
		}
	}
}

func TestSplitImageRef(t *testing.T) {
	cases := []struct{ ref, name, tag string }{
		{"busybox", "busybox", "latest"},
		{"busybox:1.36", "busybox", "1.36"},
		{"drover-test/busybox:latest", "drover-test/busybox", "latest"},
		{"localhost:5000/app", "localhost:5000/app", "latest"},
		{"localhost:5000/app:v2", "localhost:5000/app", "v2"},
		{"app@sha256:abc", "app@sha256:abc", ""},
	}
	for _, tc := range cases {
		if n, tag := splitImageRef(tc.ref); n != tc.name || tag != tc.tag {
			t.Errorf("splitImageRef(%q) = %q, %q; want %q, %q", tc.ref, n, tag, tc.name, tc.tag)
		}
	}
}

func TestNewClientEndpoints(t *testing.T) {
	tlsConf := &tls.Config{MinVersion: tls.VersionTLS12}
	cases := []struct {
		endpoint, base string
		tls            *tls.Config
		wantErr        bool
	}{
		{"", "http://docker", nil, false},
		{"unix:///var/run/docker.sock", "http://docker", nil, false},
		{"tcp://127.0.0.1:2375", "http://127.0.0.1:2375", nil, false},
		{"tcp://127.0.0.1:2376", "https://127.0.0.1:2376", tlsConf, false},
		{"https://x:2376", "https://x:2376", nil, false},
		{"unix:///var/run/docker.sock", "", tlsConf, true},
		{"ssh://x", "", nil, true},
		{"unix://", "", nil, true},
		{"tcp://", "", nil, true},
	}
	for _, tc := range cases {
		c, err := newClient(tc.endpoint, tc.tls)
		if (err != nil) != tc.wantErr {
			t.Errorf("newClient(%q) err = %v, wantErr %v", tc.endpoint, err, tc.wantErr)
			continue
		}
		if err == nil && c.base != tc.base {
			t.Errorf("newClient(%q).base = %q, want %q", tc.endpoint, c.base, tc.base)
		}
	}
}

// fakeDaemon serves handler on a unix socket and returns its endpoint.
func fakeDaemon(t *testing.T, handler http.Handler) string {
	t.Helper()
	sock := filepath.Join(t.TempDir(), "d.sock")
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: handler}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		_ = srv.Serve(l)
	}()
	t.Cleanup(func() {
		_ = srv.Close()
		wg.Wait()
	})
	return "unix://" + sock
}

func TestClientVersioningAndErrors(t *testing.T) {
	var mu sync.Mutex
	var paths []string
	mux := http.NewServeMux()
	mux.HandleFunc("/version", func(w http.ResponseWriter, r *http.Request) {
		_, _ = w.Write([]byte(`{"Version":"20.10.24","ApiVersion":"1.41","MinAPIVersion":"1.12","Os":"linux"}`))
	})
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		paths = append(paths, r.URL.Path)
		mu.Unlock()
		switch {
		case strings.HasSuffix(r.URL.Path, "/json"):
			w.WriteHeader(http.StatusNotFound)
			_, _ = w.Write([]byte(`{"message":"No such container: nope"}`))
		case strings.HasSuffix(r.URL.Path, "/kill"):
			w.WriteHeader(http.StatusConflict)
			_, _ = w.Write([]byte(`{"message":"Container x is not running"}`))
		default:
			w.WriteHeader(http.StatusInternalServerError)
			_, _ = w.Write([]byte("plain failure"))
		}
	})
	c, err := newClient(fakeDaemon(t, mux), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.close()
	ctx := context.Background()

	_, err = c.inspectContainer(ctx, "nope")
	if !isNotFound(err) || !strings.Contains(err.Error(), "No such container") {
		t.Fatalf("inspect err = %v, want a 404 naming the container", err)
	}
	if err := c.killContainer(ctx, "x", "15"); err != nil {
		t.Fatalf("kill of a stopped container: %v", err)
	}
	if err := c.startContainer(ctx, "x"); statusOf(err) != 500 || !strings.Contains(err.Error(), "plain failure") {
		t.Fatalf("start err = %v", err)
	}
	mu.Lock()
	defer mu.Unlock()
	for _, p := range paths {
		if !strings.HasPrefix(p, "/v1.41/") {
			t.Errorf("request %q not under the negotiated version", p)
		}
	}
}
