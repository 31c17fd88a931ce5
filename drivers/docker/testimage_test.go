package docker

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
)

// savedImage is the test image as `docker save` writes it: its config
// (JSON) and its one layer (an uncompressed tar).
type savedImage struct {
	config []byte
	layer  []byte
}

// saveTestImage reads testImage from the daemon (GET /images/{name}/get).
func saveTestImage(t *testing.T, c *client) savedImage {
	t.Helper()
	resp, err := c.do(context.Background(), http.MethodGet, "/images/"+testImage+"/get", nil, nil, "", true)
	if err != nil {
		t.Fatalf("save %s: %v", testImage, err)
	}
	defer resp.Body.Close()
	files := map[string][]byte{}
	tr := tar.NewReader(resp.Body)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(tr)
		if err != nil {
			t.Fatal(err)
		}
		files[h.Name] = b
	}
	var manifest []struct {
		Config string
		Layers []string
	}
	if err := json.Unmarshal(files["manifest.json"], &manifest); err != nil || len(manifest) != 1 || len(manifest[0].Layers) != 1 {
		t.Fatalf("saved %s: unexpected manifest.json %s: %v", testImage, files["manifest.json"], err)
	}
	return savedImage{config: files[manifest[0].Config], layer: files[manifest[0].Layers[0]]}
}

// withLabel returns the image with a label added to its config, so that it
// is a new image (its ID is its config's digest) with the same layer.
func (s savedImage) withLabel(k, v string) savedImage {
	var cfg map[string]any
	if err := json.Unmarshal(s.config, &cfg); err != nil {
		panic(err)
	}
	c, _ := cfg["config"].(map[string]any)
	if c == nil {
		c = map[string]any{}
		cfg["config"] = c
	}
	labels, _ := c["Labels"].(map[string]any)
	if labels == nil {
		labels = map[string]any{}
	}
	labels[k] = v
	c["Labels"] = labels
	b, err := json.Marshal(cfg)
	if err != nil {
		panic(err)
	}
	return savedImage{config: b, layer: s.layer}
}

// tarball returns the image as a `docker load` tarball tagged tag.
func (s savedImage) tarball(t *testing.T, tag string) []byte {
	t.Helper()
	configName := digestHex(s.config) + ".json"
	manifest, _ := json.Marshal([]map[string]any{{"Config": configName, "RepoTags": []string{tag}, "Layers": []string{"layer/layer.tar"}}})
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, f := range []struct {
		name string
		data []byte
	}{{configName, s.config}, {"layer/layer.tar", s.layer}, {"manifest.json", manifest}} {
		if err := tw.WriteHeader(&tar.Header{Name: f.name, Mode: 0o644, Size: int64(len(f.data)), Typeflag: tar.TypeReg}); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write(f.data); err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func digestHex(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// testRegistry is a minimal Docker registry (HTTP API v2) on loopback,
// which the daemon reaches over plain HTTP (it trusts 127.0.0.0/8 as an
// insecure registry by default). It authenticates as Docker Hub does: its
// token endpoint gives a bearer token for the credentials (basic auth with
// user and pass) or an anonymous one; repositories named in private need
// the former.
type testRegistry struct {
	host       string // 127.0.0.1:port
	user, pass string

	mu        sync.Mutex // guards the fields below
	private   map[string]bool
	manifests map[string][]byte // "repo:tag" and "repo@digest"
	blobs     map[string][]byte // digest
	// manifestGets counts manifest requests by "repo:ref" and whether
	// they carried valid credentials.
	manifestGets map[string]int
	authorized   map[string]int
}

func newTestRegistry(t *testing.T) *testRegistry {
	t.Helper()
	r := &testRegistry{user: "drover", pass: "s3cret", private: map[string]bool{},
		manifests: map[string][]byte{}, blobs: map[string][]byte{}, manifestGets: map[string]int{}, authorized: map[string]int{}}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	r.host = l.Addr().String()
	srv := &http.Server{Handler: r}
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
	return r
}

// push serves img as repo:tag (repo private or not) and returns its image
// ID (the config's digest).
func (r *testRegistry) push(t *testing.T, repo, tag string, img savedImage, private bool) string {
	t.Helper()
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	if _, err := zw.Write(img.layer); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	cfgDigest := "sha256:" + digestHex(img.config)
	layerDigest := "sha256:" + digestHex(gz.Bytes())
	manifest, _ := json.Marshal(map[string]any{
		"schemaVersion": 2,
		"mediaType":     "application/vnd.docker.distribution.manifest.v2+json",
		"config":        map[string]any{"mediaType": "application/vnd.docker.container.image.v1+json", "size": len(img.config), "digest": cfgDigest},
		"layers":        []any{map[string]any{"mediaType": "application/vnd.docker.image.rootfs.diff.tar.gzip", "size": gz.Len(), "digest": layerDigest}},
	})
	r.mu.Lock()
	defer r.mu.Unlock()
	r.private[repo] = private
	r.manifests[repo+":"+tag] = manifest
	r.manifests[repo+"@sha256:"+digestHex(manifest)] = manifest
	r.blobs[cfgDigest] = img.config
	r.blobs[layerDigest] = gz.Bytes()
	return cfgDigest
}

// gets returns how many manifest requests repo:ref got, and how many of
// them carried the right credentials.
func (r *testRegistry) gets(repoRef string) (all, authorized int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.manifestGets[repoRef], r.authorized[repoRef]
}

// The bearer tokens the token endpoint hands out.
const (
	userToken = "drover-user-token"
	anonToken = "drover-anonymous-token"
)

// authOK reports whether req carries the token of a user who logged in.
func (r *testRegistry) authOK(req *http.Request) bool {
	return req.Header.Get("Authorization") == "Bearer "+userToken
}

func (r *testRegistry) challenge(w http.ResponseWriter) {
	w.Header().Set("WWW-Authenticate", `Bearer realm="http://`+r.host+`/token",service="drover-test"`)
	http.Error(w, `{"errors":[{"code":"UNAUTHORIZED","message":"authentication required"}]}`, http.StatusUnauthorized)
}

// token is the token endpoint: valid credentials get the user's token,
// none an anonymous one, wrong ones a 401.
func (r *testRegistry) token(w http.ResponseWriter, req *http.Request) {
	tok := anonToken
	if u, p, ok := req.BasicAuth(); ok {
		if u != r.user || p != r.pass {
			http.Error(w, `{"details":"incorrect username or password"}`, http.StatusUnauthorized)
			return
		}
		tok = userToken
	}
	_, _ = fmt.Fprintf(w, `{"token":%q,"access_token":%q,"expires_in":300}`, tok, tok)
}

// ServeHTTP answers /v2/, manifests and blobs.
func (r *testRegistry) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	w.Header().Set("Docker-Distribution-API-Version", "registry/2.0")
	p := req.URL.Path
	if p == "/token" {
		r.token(w, req)
		return
	}
	if p == "/v2/" || p == "/v2" {
		if a := req.Header.Get("Authorization"); a != "Bearer "+userToken && a != "Bearer "+anonToken {
			r.challenge(w)
			return
		}
		_, _ = w.Write([]byte("{}"))
		return
	}
	rest, ok := strings.CutPrefix(p, "/v2/")
	if !ok {
		http.NotFound(w, req)
		return
	}
	var repo, kind, ref string
	for _, k := range []string{"/manifests/", "/blobs/"} {
		if i := strings.LastIndex(rest, k); i > 0 {
			repo, kind, ref = rest[:i], strings.Trim(k, "/"), rest[i+len(k):]
		}
	}
	r.mu.Lock()
	private := r.private[repo]
	var body []byte
	if kind == "manifests" {
		key := repo + ":" + ref
		if strings.HasPrefix(ref, "sha256:") {
			key = repo + "@" + ref
		}
		body = r.manifests[key]
		r.manifestGets[repo+":"+ref]++
		if r.authOK(req) {
			r.authorized[repo+":"+ref]++
		}
	} else if kind == "blobs" {
		body = r.blobs[ref]
	}
	r.mu.Unlock()
	if private && !r.authOK(req) {
		r.challenge(w)
		return
	}
	if body == nil {
		w.WriteHeader(http.StatusNotFound)
		_, _ = w.Write([]byte(`{"errors":[{"code":"MANIFEST_UNKNOWN","message":"unknown"}]}`))
		return
	}
	if kind == "manifests" {
		w.Header().Set("Content-Type", "application/vnd.docker.distribution.manifest.v2+json")
		w.Header().Set("Docker-Content-Digest", "sha256:"+digestHex(body))
	} else {
		w.Header().Set("Content-Type", "application/octet-stream")
	}
	w.Header().Set("Content-Length", fmt.Sprint(len(body)))
	if req.Method == http.MethodHead {
		return
	}
	_, _ = w.Write(body)
}

// basicAuth is the "auth" value of a Docker config.json entry.
func basicAuth(user, pass string) string {
	return base64.StdEncoding.EncodeToString([]byte(user + ":" + pass))
}

// removeImageForce removes an image the test made, whatever uses it.
func removeImageForce(c *client, ref string) {
	_ = c.doJSON(context.Background(), http.MethodDelete, "/images/"+ref, url.Values{"force": {"1"}}, nil, nil, true)
}

// newStallingServer is a registry on loopback whose /v2/ answers but
// whose every other request hangs until stall is closed; it returns its
// host:port.
func newStallingServer(t *testing.T, stall <-chan struct{}) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Docker-Distribution-API-Version", "registry/2.0")
		if r.URL.Path == "/v2/" {
			_, _ = w.Write([]byte("{}"))
			return
		}
		select {
		case <-stall:
		case <-r.Context().Done():
		}
		http.NotFound(w, r)
	})}
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
	return l.Addr().String()
}
