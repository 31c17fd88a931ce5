package ui

import (
	"bytes"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"fmt"
	"io/fs"
	"net/http"
	"path"
	"slices"
	"strings"
	"time"
)

//go:embed assets
var embedded embed.FS

// Prefix is the path the UI is served under.
const Prefix = "/ui/"

// ContentSecurityPolicy is sent with every UI response: scripts, styles,
// images and API calls come from the agent itself, nothing is inline and
// no page may frame the UI.
const ContentSecurityPolicy = "default-src 'none'; script-src 'self'; style-src 'self'; " +
	"img-src 'self' data:; connect-src 'self'; font-src 'self'; manifest-src 'self'; " +
	"base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

// assetsPlaceholder is replaced in index.html by the versioned path of
// the assets (see site.assetBase).
const assetsPlaceholder = "{{ASSETS}}"

// contentTypes maps the extensions the UI's assets may have to their
// Content-Type. An asset with another extension is a build mistake that
// newSite reports.
var contentTypes = map[string]string{
	".html": "text/html; charset=utf-8",
	".js":   "text/javascript; charset=utf-8",
	".css":  "text/css; charset=utf-8",
	".svg":  "image/svg+xml",
	".png":  "image/png",
	".json": "application/json",
	".txt":  "text/plain; charset=utf-8",
}

// asset is one file ready to serve.
type asset struct {
	body  []byte
	ctype string
	etag  string
}

// site is the UI's assets, read once.
type site struct {
	// assetBase is "/ui/assets/<version>/": the version is a hash of every
	// asset, so that the files under it can be cached for good and a new
	// binary's UI is never mixed with an old one's.
	assetBase string
	files     map[string]asset // by path under assets/, "js/app.js"
	index     asset            // index.html with assetBase filled in
}

// Handler returns the web UI's handler for requests whose path starts with
// /ui/: GET and HEAD of /ui/assets/<version>/<file> serve an asset, to be
// cached for good; any other /ui/ path serves index.html (never cached),
// whose scripts route the path in the browser. A path with a file
// extension that names no asset is a 404, not the page. Every response
// carries the Content-Security-Policy.
//
// It panics if the embedded assets are malformed, which the package's
// tests rule out.
func Handler() http.Handler {
	s, err := newSite(embedded)
	if err != nil {
		panic(fmt.Sprintf("ui: embedded assets: %v", err))
	}
	return s
}

// Mount returns a handler that serves the UI beside api: /ui/ and below
// go to the UI and GET / redirects there. With enabled false, /ui/ answers
// 404 with how to turn it on, and / is left to api. Every other path goes
// to api untouched.
func Mount(api http.Handler, enabled bool) http.Handler {
	var uh http.Handler = disabled{}
	if enabled {
		uh = Handler()
	}
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		p := req.URL.Path
		switch {
		case p == "/ui" || strings.HasPrefix(p, Prefix):
			uh.ServeHTTP(w, req)
		case p == "/" && enabled && (req.Method == http.MethodGet || req.Method == http.MethodHead):
			http.Redirect(w, req, Prefix, http.StatusTemporaryRedirect)
		default:
			api.ServeHTTP(w, req)
		}
	})
}

// disabled answers UI requests of an agent with ui { enabled = false }.
type disabled struct{}

func (disabled) ServeHTTP(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(http.StatusNotFound)
	_, _ = fmt.Fprintln(w, "the web UI is disabled on this agent: set ui { enabled = true } in its configuration to serve it")
}

// newSite reads the assets under assets/ in fsys.
func newSite(fsys fs.FS) (*site, error) {
	root, err := fs.Sub(fsys, "assets")
	if err != nil {
		return nil, err
	}
	s := &site{files: map[string]asset{}}
	var names []string
	err = fs.WalkDir(root, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		body, err := fs.ReadFile(root, p)
		if err != nil {
			return err
		}
		ctype, ok := contentTypes[path.Ext(p)]
		if !ok {
			return fmt.Errorf("%s: no content type for extension %q: add it to contentTypes", p, path.Ext(p))
		}
		s.files[p] = asset{body: body, ctype: ctype, etag: etag(body)}
		names = append(names, p)
		return nil
	})
	if err != nil {
		return nil, err
	}
	index, ok := s.files["index.html"]
	if !ok {
		return nil, fmt.Errorf("no index.html")
	}
	delete(s.files, "index.html")
	if len(s.files) == 0 {
		return nil, fmt.Errorf("no assets besides index.html")
	}
	if !bytes.Contains(index.body, []byte(assetsPlaceholder)) {
		return nil, fmt.Errorf("index.html does not refer to %s", assetsPlaceholder)
	}
	// The version covers every asset, names and contents.
	names = slices.DeleteFunc(names, func(n string) bool { return n == "index.html" })
	slices.Sort(names)
	h := sha256.New()
	for _, n := range names {
		fmt.Fprintf(h, "%s\x00%d\x00", n, len(s.files[n].body))
		h.Write(s.files[n].body)
	}
	s.assetBase = Prefix + "assets/" + hex.EncodeToString(h.Sum(nil))[:16] + "/"
	body := bytes.ReplaceAll(index.body, []byte(assetsPlaceholder), []byte(strings.TrimSuffix(s.assetBase, "/")))
	s.index = asset{body: body, ctype: index.ctype, etag: etag(body)}
	return s, nil
}

func etag(body []byte) string {
	sum := sha256.Sum256(body)
	return `"` + hex.EncodeToString(sum[:])[:20] + `"`
}

// ServeHTTP serves an asset or index.html.
func (s *site) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	h := w.Header()
	h.Set("Content-Security-Policy", ContentSecurityPolicy)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Referrer-Policy", "no-referrer")
	if req.Method != http.MethodGet && req.Method != http.MethodHead {
		h.Set("Allow", "GET, HEAD")
		http.Error(w, fmt.Sprintf("method %s is not allowed on %s: the UI is read with GET", req.Method, req.URL.Path), http.StatusMethodNotAllowed)
		return
	}
	p := req.URL.Path
	if p == "/ui" {
		http.Redirect(w, req, Prefix, http.StatusMovedPermanently)
		return
	}
	if rest, ok := strings.CutPrefix(p, Prefix+"assets/"); ok {
		if name, ok := strings.CutPrefix(p, s.assetBase); ok {
			if a, ok := s.files[name]; ok {
				h.Set("Cache-Control", "public, max-age=31536000, immutable")
				serve(w, req, a)
				return
			}
		}
		http.Error(w, fmt.Sprintf("no UI asset %q in this agent's version of the UI: reload the page", rest), http.StatusNotFound)
		return
	}
	// The page's own routes are /ui/<page>[/<id>...] and their IDs may
	// hold dots (a job "web.v2"); a single segment with an asset's
	// extension (/ui/app.js) is a broken link, not a page.
	if rest := strings.TrimPrefix(p, Prefix); !strings.Contains(rest, "/") {
		if _, known := contentTypes[path.Ext(rest)]; known {
			http.Error(w, fmt.Sprintf("no UI file %q: the UI's files are under %s", p, s.assetBase), http.StatusNotFound)
			return
		}
	}
	h.Set("Cache-Control", "no-cache")
	serve(w, req, s.index)
}

// serve writes a with its validators; http.ServeContent answers
// If-None-Match with 304 and HEAD without a body.
func serve(w http.ResponseWriter, req *http.Request, a asset) {
	w.Header().Set("Content-Type", a.ctype)
	w.Header().Set("ETag", a.etag)
	http.ServeContent(w, req, "", time.Time{}, bytes.NewReader(a.body))
}
