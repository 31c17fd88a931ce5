package artifact

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	cleanhttp "github.com/hashicorp/go-cleanhttp"
	getter "github.com/hashicorp/go-getter/v2"

	"github.com/drover-io/drover/drivers/shared/beneath"
	"github.com/drover-io/drover/structs"
)

// Defaults of Config, as Nomad's client { artifact { ... } }.
const (
	DefaultHTTPReadTimeout             = 30 * time.Minute
	DefaultHTTPMaxBytes                = 100_000_000_000 // 100 GB
	DefaultGitTimeout                  = 30 * time.Minute
	DefaultDecompressionFileCountLimit = 4096
	DefaultDecompressionSizeLimit      = 100_000_000_000 // 100 GB
)

// headFirstTimeout bounds the HEAD request the http getter sends before
// its GET.
const headFirstTimeout = 10 * time.Second

// Config configures a Getter (the client's artifact block).
type Config struct {
	// HTTPReadTimeout bounds an http(s) request and the reading of its
	// body; 0 is none.
	HTTPReadTimeout time.Duration
	// HTTPMaxBytes bounds an http(s) download; 0 is none.
	HTTPMaxBytes int64
	// GitTimeout bounds each git command; 0 is none.
	GitTimeout time.Duration
	// DecompressionFileCountLimit bounds the files an archive unpacks
	// to, DecompressionSizeLimit their total size; 0 is none.
	DecompressionFileCountLimit int
	DecompressionSizeLimit      int64
	// DisableFilesystemIsolation lets artifacts read any file of the
	// client (as the agent's user, root) rather than only the
	// allocation's directory, and clone git repositories from it.
	DisableFilesystemIsolation bool
}

// DefaultConfig returns the defaults.
func DefaultConfig() Config {
	return Config{
		HTTPReadTimeout:             DefaultHTTPReadTimeout,
		HTTPMaxBytes:                DefaultHTTPMaxBytes,
		GitTimeout:                  DefaultGitTimeout,
		DecompressionFileCountLimit: DefaultDecompressionFileCountLimit,
		DecompressionSizeLimit:      DefaultDecompressionSizeLimit,
	}
}

// Getter fetches artifacts. It holds no state between fetches and is safe
// for concurrent use.
type Getter struct {
	cfg    Config
	logger *slog.Logger
}

// New returns a Getter; a nil logger discards.
func New(cfg Config, logger *slog.Logger) *Getter {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	return &Getter{cfg: cfg, logger: logger}
}

// Request is one artifact to fetch for a task.
type Request struct {
	// Artifact is the artifact, its fields interpolated.
	Artifact *structs.TaskArtifact
	// AllocDir is the allocation's directory; TaskDir the name of the
	// task's directory beneath it.
	AllocDir string
	TaskDir  string
	// Owner, when not nil, is given what is fetched (the artifact's
	// chown, with the task's user).
	Owner *Owner
}

// Owner is a user and group IDs.
type Owner struct{ UID, GID int }

// Error is a failed fetch. A Recoverable one (the network, the server, a
// checksum that did not match) may succeed when tried again; the others
// (a destination or an archive that would leave the task's directory, a
// source the client refuses to read) never will.
type Error struct {
	Err         error
	Recoverable bool
}

// Error returns the cause.
func (e *Error) Error() string { return e.Err.Error() }

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Err }

// IsRecoverable reports whether err is an *Error marked recoverable.
func IsRecoverable(err error) bool {
	var e *Error
	return errors.As(err, &e) && e.Recoverable
}

func recoverable(format string, args ...any) error {
	return &Error{Err: fmt.Errorf(format, args...), Recoverable: true}
}

func permanent(format string, args ...any) error {
	return &Error{Err: fmt.Errorf(format, args...)}
}

// forcedGetter is go-getter's "getter::source" syntax.
var forcedGetter = regexp.MustCompile(`^([A-Za-z0-9]+)::(.+)$`)

// Fetch fetches req's artifact into the task's directory.
func (g *Getter) Fetch(ctx context.Context, req *Request) error {
	a := req.Artifact
	dest, err := structs.ArtifactDestination(a.RelativeDest)
	if err != nil {
		return permanent("%v", err)
	}
	forced, src := splitForced(strings.TrimSpace(a.GetterSource))
	src = withOptions(src, a.GetterOptions)
	shown := redact(forced, src)

	root, err := beneath.OpenRoot(req.AllocDir)
	if err != nil {
		return recoverable("open the allocation directory: %w", err)
	}
	defer root.Close()
	staging, err := os.MkdirTemp(req.AllocDir, ".artifact-")
	if err != nil {
		return recoverable("make a staging directory: %w", err)
	}
	defer os.RemoveAll(staging)
	stagingName := filepath.Base(staging)
	taskDir := filepath.Join(req.AllocDir, req.TaskDir)

	if local, ok := localSource(forced, src); ok && !g.cfg.DisableFilesystemIsolation {
		if forced != "" && forced != "file" {
			return permanent("artifact %s: a %s source on the client's file system is refused; fetch it over the network, "+
				"or set disable_filesystem_isolation in the client's artifact block", shown, forced)
		}
		copied, err := copyLocal(root, req.AllocDir, taskDir, local, filepath.Join(staging, "src"))
		if err != nil {
			return err
		}
		forced, src = "", (&url.URL{Scheme: "file", Path: copied, RawQuery: queryOf(src)}).String()
	}

	mode := getter.ModeAny
	switch a.GetterMode {
	case structs.ArtifactModeFile:
		mode = getter.ModeFile
	case structs.ArtifactModeDir:
		mode = getter.ModeDir
	}
	if forced != "" {
		src = forced + "::" + src
	}
	_, err = g.client(a).Get(ctx, &getter.Request{
		Src:             src,
		Dst:             filepath.Join(staging, "dl"),
		Pwd:             taskDir,
		GetMode:         mode,
		Copy:            true,
		DisableSymlinks: true,
		Umask:           0o022,
	})
	if err != nil {
		if cerr := ctx.Err(); cerr != nil {
			return fmt.Errorf("fetch artifact %s: %w", shown, cerr)
		}
		return recoverable("fetch artifact %s: %v", shown, err)
	}
	placed, err := place(root, stagingName+"/dl", joinName(req.TaskDir, dest))
	if err != nil {
		return fmt.Errorf("artifact %s: %w", shown, err)
	}
	if o := req.Owner; o != nil && a.Chown {
		for _, name := range placed {
			if err := root.Chown(name, o.UID, o.GID); err != nil && !errors.Is(err, beneath.ErrSymlink) {
				return permanent("artifact %s: give %s to the task's user: %v", shown, name, err)
			}
		}
	}
	g.logger.Debug("fetched artifact", "source", shown, "destination", dest)
	return nil
}

// client returns the go-getter client of an artifact: git, http(s) (with
// its headers, limits and TLS check) and local files; archives unpacked
// within the configured limits; no writing through links.
func (g *Getter) client(a *structs.TaskArtifact) *getter.Client {
	hc := cleanhttp.DefaultClient()
	t := cleanhttp.DefaultTransport()
	if a.GetterInsecure {
		t.TLSClientConfig = &tls.Config{InsecureSkipVerify: true} //nolint:gosec // the job asked for it (insecure = true)
	}
	hc.Transport = t
	if g.cfg.HTTPMaxBytes > 0 {
		// The getter's own MaxBytes truncates a larger body without an
		// error: this transport fails the download instead.
		hc.Transport = &limitTransport{base: t, max: g.cfg.HTTPMaxBytes}
	}
	header := make(http.Header, len(a.GetterHeaders))
	for _, k := range slices.Sorted(maps.Keys(a.GetterHeaders)) {
		header.Set(k, a.GetterHeaders[k])
	}
	return &getter.Client{
		Getters: []getter.Getter{
			&getter.GitGetter{
				Detectors: []getter.Detector{new(getter.GitHubDetector), new(getter.GitDetector), new(getter.BitBucketDetector), new(getter.GitLabDetector)},
				Timeout:   g.cfg.GitTimeout,
			},
			&getter.HttpGetter{
				Client:                hc,
				Header:                header,
				HeadFirstTimeout:      headFirstTimeout,
				ReadTimeout:           g.cfg.HTTPReadTimeout,
				XTerraformGetDisabled: true,
			},
			new(getter.FileGetter),
		},
		Decompressors:   getter.LimitedDecompressors(g.cfg.DecompressionFileCountLimit, g.cfg.DecompressionSizeLimit),
		DisableSymlinks: true,
	}
}

// splitForced splits go-getter's "getter::source" syntax.
func splitForced(src string) (forced, rest string) {
	if m := forcedGetter.FindStringSubmatch(src); m != nil {
		return m[1], m[2]
	}
	return "", src
}

// withOptions adds the artifact's options to the source's query (sorted,
// so that the URL is the same every time).
func withOptions(src string, opts map[string]string) string {
	if len(opts) == 0 {
		return src
	}
	q := url.Values{}
	for k, v := range opts {
		q.Set(k, v)
	}
	sep := "?"
	if strings.Contains(src, "?") {
		sep = "&"
	}
	return src + sep + q.Encode()
}

// queryOf returns the query of src, "" when none.
func queryOf(src string) string {
	_, q, _ := strings.Cut(src, "?")
	return q
}

// redact returns the source as shown in messages and events: without a
// password in its URL.
func redact(forced, src string) string {
	shown := src
	if u, err := url.Parse(src); err == nil && u.User != nil {
		shown = u.Redacted()
	}
	if forced != "" {
		shown = forced + "::" + shown
	}
	return shown
}

// localSource returns the path of a source on the client's file system
// (without its query): a file:// URL, a path (absolute, or relative to the
// task's directory), or a forced getter's file URL or path.
func localSource(forced, src string) (string, bool) {
	p, _, _ := strings.Cut(src, "?")
	if rest, ok := strings.CutPrefix(p, "file://"); ok {
		return rest, true
	}
	if forced != "" && forced != "file" {
		return p, strings.HasPrefix(p, "/") || strings.HasPrefix(p, ".")
	}
	if forced == "file" {
		return p, true
	}
	if strings.Contains(p, "://") {
		return "", false
	}
	for _, remote := range []string{"github.com/", "gitlab.com/", "bitbucket.org/", "git@"} {
		if strings.HasPrefix(p, remote) {
			return "", false
		}
	}
	return p, true
}

// joinName joins slash-separated names beneath a root ("" is none).
func joinName(elems ...string) string {
	var parts []string
	for _, e := range elems {
		if e != "" {
			parts = append(parts, e)
		}
	}
	return strings.Join(parts, "/")
}

// limitTransport fails a response whose body is larger than max bytes:
// at once when its Content-Length says so, or when the reading passes it.
type limitTransport struct {
	base http.RoundTripper
	max  int64
}

// RoundTrip implements http.RoundTripper.
func (l *limitTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := l.base.RoundTrip(req)
	if err != nil || req.Method == http.MethodHead {
		return resp, err
	}
	if resp.ContentLength > l.max {
		resp.Body.Close()
		return nil, fmt.Errorf("the artifact is %d bytes: larger than the client's http_max_size of %d", resp.ContentLength, l.max)
	}
	resp.Body = &limitedBody{ReadCloser: resp.Body, left: l.max}
	return resp, nil
}

// limitedBody fails a read that passes its limit.
type limitedBody struct {
	io.ReadCloser
	left int64
}

func (b *limitedBody) Read(p []byte) (int, error) {
	if int64(len(p)) > b.left+1 {
		p = p[:b.left+1]
	}
	n, err := b.ReadCloser.Read(p)
	b.left -= int64(n)
	if b.left < 0 {
		return 0, errTooLarge
	}
	return n, err
}

// errTooLarge is a download larger than http_max_size.
var errTooLarge = errors.New("the artifact is larger than the client's http_max_size")
