package ui

import (
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"path"
	"regexp"
	"strings"
	"testing"
	"testing/fstest"
)

func testSite(t *testing.T) *site {
	t.Helper()
	s, err := newSite(embedded)
	if err != nil {
		t.Fatalf("embedded assets: %v", err)
	}
	return s
}

func do(t *testing.T, h http.Handler, method, target string, hdr map[string]string) *httptest.ResponseRecorder {
	t.Helper()
	req := httptest.NewRequest(method, target, nil)
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec
}

// TestHandler: the assets are served with their content types and cached
// for good under the versioned path; every other /ui/ path is the page
// (never cached); file-like paths that name nothing are 404s.
func TestHandler(t *testing.T) {
	s := testSite(t)
	base := s.assetBase
	tests := []struct {
		name, method, path string
		code               int
		ctype, cache       string
		bodyHas            string
	}{
		{"index", "GET", "/ui/", 200, "text/html; charset=utf-8", "no-cache", base + "js/app.js"},
		{"jobs page", "GET", "/ui/jobs", 200, "text/html; charset=utf-8", "no-cache", "<main"},
		{"job page", "GET", "/ui/jobs/web", 200, "text/html; charset=utf-8", "no-cache", "<main"},
		{"job with a dot", "GET", "/ui/jobs/web.v2.js", 200, "text/html; charset=utf-8", "no-cache", "<main"},
		{"escaped job ID", "GET", "/ui/jobs/a%2Fb", 200, "text/html; charset=utf-8", "no-cache", "<main"},
		{"allocation page", "GET", "/ui/allocations/0b3c", 200, "text/html; charset=utf-8", "no-cache", "<main"},
		{"unknown page", "GET", "/ui/nothing/here", 200, "text/html; charset=utf-8", "no-cache", "<main"},
		{"script", "GET", base + "js/app.js", 200, "text/javascript; charset=utf-8", "public, max-age=31536000, immutable", "import"},
		{"page module", "GET", base + "js/pages/job.js", 200, "text/javascript; charset=utf-8", "public, max-age=31536000, immutable", "export"},
		{"stylesheet", "GET", base + "css/app.css", 200, "text/css; charset=utf-8", "public, max-age=31536000, immutable", "body"},
		{"icon", "GET", base + "favicon.svg", 200, "image/svg+xml", "public, max-age=31536000, immutable", "<svg"},
		{"head", "HEAD", base + "js/app.js", 200, "text/javascript; charset=utf-8", "public, max-age=31536000, immutable", ""},
		{"asset of another version", "GET", "/ui/assets/0123456789abcdef/js/app.js", 404, "text/plain; charset=utf-8", "", "reload"},
		{"missing asset", "GET", base + "js/nope.js", 404, "text/plain; charset=utf-8", "", "nope.js"},
		{"index.html is not an asset", "GET", base + "index.html", 404, "text/plain; charset=utf-8", "", ""},
		{"file-like path at the top", "GET", "/ui/app.js", 404, "text/plain; charset=utf-8", "", "no UI file"},
		{"write", "POST", "/ui/jobs", 405, "text/plain; charset=utf-8", "", "GET"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := do(t, s, tt.method, tt.path, nil)
			if rec.Code != tt.code {
				t.Fatalf("%s %s: code %d, want %d; body %q", tt.method, tt.path, rec.Code, tt.code, rec.Body)
			}
			if got := rec.Header().Get("Content-Type"); got != tt.ctype {
				t.Errorf("Content-Type %q, want %q", got, tt.ctype)
			}
			if got := rec.Header().Get("Cache-Control"); got != tt.cache {
				t.Errorf("Cache-Control %q, want %q", got, tt.cache)
			}
			if got := rec.Header().Get("Content-Security-Policy"); got != ContentSecurityPolicy {
				t.Errorf("Content-Security-Policy %q, want %q", got, ContentSecurityPolicy)
			}
			if got := rec.Header().Get("X-Content-Type-Options"); got != "nosniff" {
				t.Errorf("X-Content-Type-Options %q, want nosniff", got)
			}
			if !strings.Contains(rec.Body.String(), tt.bodyHas) {
				t.Errorf("body does not contain %q:\n%.300s", tt.bodyHas, rec.Body)
			}
			if tt.method == "HEAD" && rec.Body.Len() != 0 {
				t.Errorf("HEAD has a body of %d bytes", rec.Body.Len())
			}
			if tt.code == 405 && rec.Header().Get("Allow") != "GET, HEAD" {
				t.Errorf("Allow %q, want GET, HEAD", rec.Header().Get("Allow"))
			}
		})
	}
}

// TestHandlerRevalidation: a browser that has a file answers 304 to its
// ETag, and the page's ETag changes when its assets do.
func TestHandlerRevalidation(t *testing.T) {
	s := testSite(t)
	for _, p := range []string{"/ui/jobs", s.assetBase + "js/app.js"} {
		first := do(t, s, "GET", p, nil)
		tag := first.Header().Get("ETag")
		if tag == "" {
			t.Fatalf("%s: no ETag", p)
		}
		again := do(t, s, "GET", p, map[string]string{"If-None-Match": tag})
		if again.Code != http.StatusNotModified {
			t.Errorf("%s with If-None-Match %s: code %d, want 304", p, tag, again.Code)
		}
	}

	changed := fstest.MapFS{}
	if err := fs.WalkDir(embedded, "assets", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := fs.ReadFile(embedded, p)
		if p == "assets/css/app.css" {
			b = append(b, "\n/* changed */\n"...)
		}
		changed[p] = &fstest.MapFile{Data: b}
		return err
	}); err != nil {
		t.Fatal(err)
	}
	s2, err := newSite(changed)
	if err != nil {
		t.Fatal(err)
	}
	if s2.assetBase == s.assetBase || s2.index.etag == s.index.etag {
		t.Errorf("a changed stylesheet kept the asset path %s and page ETag %s", s.assetBase, s.index.etag)
	}
}

// TestMount: the UI sits beside the API: /ui/ is the UI, / redirects to
// it, everything else is the API's; disabled, /ui/ says how to enable it
// and / is the API's.
func TestMount(t *testing.T) {
	api := http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		w.Header().Set("X-Test", "api")
		http.Error(w, "api "+req.URL.Path, http.StatusTeapot)
	})
	tests := []struct {
		name     string
		enabled  bool
		method   string
		path     string
		code     int
		location string
		toAPI    bool
		bodyHas  string
	}{
		{"root redirects", true, "GET", "/", 307, "/ui/", false, ""},
		{"ui without slash", true, "GET", "/ui", 301, "/ui/", false, ""},
		{"ui page", true, "GET", "/ui/jobs/x", 200, "", false, "<main"},
		{"api", true, "GET", "/v1/jobs", 418, "", true, "api /v1/jobs"},
		{"root write is the api's", true, "PUT", "/", 418, "", true, ""},
		{"ui-like prefix is the api's", true, "GET", "/uix", 418, "", true, ""},
		{"disabled ui", false, "GET", "/ui/", 404, "", false, "ui { enabled = true }"},
		{"disabled ui page", false, "GET", "/ui/jobs", 404, "", false, "disabled"},
		{"disabled root is the api's", false, "GET", "/", 418, "", true, ""},
		{"disabled api", false, "GET", "/v1/jobs", 418, "", true, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := do(t, Mount(api, tt.enabled), tt.method, tt.path, nil)
			if rec.Code != tt.code {
				t.Fatalf("code %d, want %d; body %q", rec.Code, tt.code, rec.Body)
			}
			if got := rec.Header().Get("Location"); got != tt.location {
				t.Errorf("Location %q, want %q", got, tt.location)
			}
			if got := rec.Header().Get("X-Test") == "api"; got != tt.toAPI {
				t.Errorf("served by the API: %v, want %v", got, tt.toAPI)
			}
			if !strings.Contains(rec.Body.String(), tt.bodyHas) {
				t.Errorf("body does not contain %q: %q", tt.bodyHas, rec.Body)
			}
		})
	}
}

// TestNewSiteRejects: malformed assets are errors that say what is wrong.
func TestNewSiteRejects(t *testing.T) {
	index := &fstest.MapFile{Data: []byte(`<script type="module" src="{{ASSETS}}/app.js"></script>`)}
	tests := []struct {
		name string
		fsys fstest.MapFS
		want string
	}{
		{"unknown extension", fstest.MapFS{"assets/index.html": index, "assets/app.js": {}, "assets/x.wasm": {}}, "no content type"},
		{"no index", fstest.MapFS{"assets/app.js": {}}, "no index.html"},
		{"index without the placeholder", fstest.MapFS{"assets/index.html": {Data: []byte("<p>")}, "assets/app.js": {}}, "{{ASSETS}}"},
		{"only an index", fstest.MapFS{"assets/index.html": index}, "no assets"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := newSite(tt.fsys)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("newSite: %v, want an error containing %q", err, tt.want)
			}
		})
	}
}

var (
	importRe = regexp.MustCompile(`(?m)^\s*(?:import|export)\s[^'"]*?from\s+'([^']+)'|^import\s+'([^']+)'`)
	refRe    = regexp.MustCompile(`(?:src|href)="\{\{ASSETS\}\}/([^"]+)"`)
)

// TestAssetsFollowTheCSP checks, without a browser, what the
// Content-Security-Policy would otherwise refuse at run time: every module
// import and every asset the page names exists, nothing is inline, nothing
// comes from another origin, and no script builds markup from strings.
func TestAssetsFollowTheCSP(t *testing.T) {
	s := testSite(t)
	raw, err := fs.ReadFile(embedded, "assets/index.html")
	if err != nil {
		t.Fatal(err)
	}
	index := string(raw)
	refs := refRe.FindAllStringSubmatch(index, -1)
	if len(refs) < 3 {
		t.Fatalf("index.html names %d assets, want the script, the stylesheet and the icon", len(refs))
	}
	for _, m := range refs {
		if _, ok := s.files[m[1]]; !ok {
			t.Errorf("index.html names %s, which is not an asset", m[1])
		}
	}
	for _, bad := range []string{"<script>", " style=", "onclick=", "onload=", "http://", "https://", "//cdn"} {
		if strings.Contains(index, bad) {
			t.Errorf("index.html contains %q, which the CSP refuses", bad)
		}
	}
	for name, a := range s.files {
		body := string(a.body)
		switch path.Ext(name) {
		case ".js":
			for _, m := range importRe.FindAllStringSubmatch(body, -1) {
				spec := m[1] + m[2]
				if !strings.HasPrefix(spec, "./") && !strings.HasPrefix(spec, "../") {
					t.Errorf("%s imports %q: only relative imports of the UI's own modules work offline", name, spec)
					continue
				}
				target := path.Join(path.Dir(name), spec)
				if _, ok := s.files[target]; !ok {
					t.Errorf("%s imports %q, which is not an asset (%s)", name, spec, target)
				}
			}
			for _, bad := range []string{"innerHTML", "outerHTML", "insertAdjacentHTML", "document.write", "eval(", "new Function",
				"'style'", "style:", "http://", "https://"} {
				if strings.Contains(body, bad) {
					t.Errorf("%s uses %q: build the DOM with dom.js and keep to the agent's origin", name, bad)
				}
			}
		case ".css":
			for _, bad := range []string{"@import", "url(http", "url(//"} {
				if strings.Contains(body, bad) {
					t.Errorf("%s contains %q: the UI loads nothing from elsewhere", name, bad)
				}
			}
		}
	}
}

// TestHandlerServesEmbedded: Handler reads the embedded assets once and serves
// them.
func TestHandlerServesEmbedded(t *testing.T) {
	rec := do(t, Handler(), "GET", "/ui/", nil)
	body, _ := io.ReadAll(rec.Body)
	if rec.Code != 200 || !strings.Contains(string(body), "/ui/assets/") {
		t.Fatalf("GET /ui/: %d %.200s", rec.Code, body)
	}
}
