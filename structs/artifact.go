package structs

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"path"
	"regexp"
	"slices"
	"strings"
)

// Artifact getter modes (the artifact block's mode), as Nomad's.
const (
	// ArtifactModeAny fetches a file into the destination directory, or
	// a directory (or an unpacked archive) as it.
	ArtifactModeAny = "any"
	// ArtifactModeFile fetches one file to the destination path.
	ArtifactModeFile = "file"
	// ArtifactModeDir fetches a directory (or unpacks an archive) into
	// the destination directory.
	ArtifactModeDir = "dir"
)

// TaskArtifact is a file, directory or archive the client fetches into the
// task's directory before the task starts (the artifact block).
type TaskArtifact struct {
	// GetterSource is where to fetch from: an http(s) URL, a git
	// repository (git::, github.com/...), or a path (relative to the
	// task's directory).
	GetterSource string
	// GetterOptions are the source's options, such as checksum
	// ("sha256:<hex>"), added to its URL's query.
	GetterOptions map[string]string
	// GetterHeaders are sent with an http(s) request.
	GetterHeaders map[string]string
	// GetterMode is ArtifactModeAny, ArtifactModeFile or ArtifactModeDir.
	GetterMode string
	// GetterInsecure skips the TLS certificate check of an https source.
	GetterInsecure bool
	// RelativeDest is where the artifact goes, relative to the task's
	// directory, which it may not leave.
	RelativeDest string
	// Chown gives what is fetched to the task's user.
	Chown bool
}

// Copy returns a deep copy of a; nil for nil.
func (a *TaskArtifact) Copy() *TaskArtifact {
	if a == nil {
		return nil
	}
	c := *a
	c.GetterOptions = maps.Clone(a.GetterOptions)
	c.GetterHeaders = maps.Clone(a.GetterHeaders)
	return &c
}

func copyArtifacts(as []*TaskArtifact) []*TaskArtifact {
	if as == nil {
		return nil
	}
	out := make([]*TaskArtifact, len(as))
	for i, a := range as {
		out[i] = a.Copy()
	}
	return out
}

// Canonicalize fills in Nomad's defaults: mode "any"; destination
// "local/", or for a file "local/<the source's file name>".
func (a *TaskArtifact) Canonicalize() {
	if a.GetterMode == "" {
		a.GetterMode = ArtifactModeAny
	}
	if a.RelativeDest == "" {
		if a.GetterMode == ArtifactModeFile {
			src := a.GetterSource
			if i := strings.IndexAny(src, "?#"); i >= 0 {
				src = src[:i]
			}
			a.RelativeDest = path.Join("local", path.Base(src))
		} else {
			a.RelativeDest = "local/"
		}
	}
	if len(a.GetterOptions) == 0 {
		a.GetterOptions = nil
	}
	if len(a.GetterHeaders) == 0 {
		a.GetterHeaders = nil
	}
}

// checksumHexLen is the length in hex digits of each checksum type.
var checksumHexLen = map[string]int{"md5": 32, "sha1": 40, "sha256": 64, "sha512": 128}

var headerName = regexp.MustCompile(`^[!#$%&'*+\-.^_` + "`" + `|~0-9A-Za-z]+$`)

// Validate checks the artifact: a source, a known mode, a destination
// that stays inside the task's directory, a well-formed checksum option
// and header names.
func (a *TaskArtifact) Validate() error {
	var errs []string
	add := func(format string, args ...any) { errs = append(errs, fmt.Sprintf(format, args...)) }
	if strings.TrimSpace(a.GetterSource) == "" {
		add("source is missing: give a URL or a path")
	}
	switch a.GetterMode {
	case "", ArtifactModeAny, ArtifactModeFile, ArtifactModeDir:
	default:
		add("mode %q is invalid: use %q, %q or %q", a.GetterMode, ArtifactModeAny, ArtifactModeFile, ArtifactModeDir)
	}
	if _, err := ArtifactDestination(a.RelativeDest); err != nil {
		add("%v", err)
	}
	if c, ok := a.GetterOptions["checksum"]; ok {
		typ, sum, found := strings.Cut(c, ":")
		n, known := checksumHexLen[typ]
		switch {
		case typ == "file" && sum != "":
			// The digest is read from a checksum file at that URL.
		case !found || !known:
			add("checksum %q is invalid: use <type>:<hex digest> with type md5, sha1, sha256 or sha512, or file:<URL of a checksum file>", c)
		case len(sum) != n:
			add("checksum %q is invalid: a %s digest is %d hex digits, not %d", c, typ, n, len(sum))
		default:
			if _, err := hex.DecodeString(sum); err != nil {
				add("checksum %q is invalid: the digest is not hexadecimal", c)
			}
		}
	}
	for _, name := range slices.Sorted(maps.Keys(a.GetterHeaders)) {
		if !headerName.MatchString(name) {
			add("header name %q is invalid: use letters, digits and -", name)
		}
		if strings.ContainsAny(a.GetterHeaders[name], "\r\n") {
			add("header %q has a line break in its value", http.CanonicalHeaderKey(name))
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("%s", strings.Join(errs, "; "))
	}
	return nil
}

// ArtifactDestination returns dest cleaned, relative to the task's
// directory ("" and "/" are the directory itself; a leading "/" is the
// task's directory, as in Nomad), or an error when it leaves the task's
// directory.
func ArtifactDestination(dest string) (string, error) {
	if strings.ContainsRune(dest, 0) {
		return "", fmt.Errorf("destination %q contains a null character", dest)
	}
	clean := path.Clean(strings.TrimLeft(dest, "/"))
	if clean == ".." || strings.HasPrefix(clean, "../") {
		return "", fmt.Errorf("destination %q leaves the task's directory: artifacts go inside it (local/, or a directory of your own)", dest)
	}
	if clean == "." {
		clean = ""
	}
	return clean, nil
}

// Hash returns a digest of the artifact's definition: a fetch recorded
// under it is not done again while it is unchanged.
func (a *TaskArtifact) Hash() string {
	b, _ := json.Marshal(a) // maps are encoded with sorted keys
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:16])
}

// artifactsDiff returns the changes of the tasks' artifacts, compared in
// order.
func artifactsDiff(old, new *Task) []*ObjectDiff {
	var o, n []*TaskArtifact
	if old != nil {
		o = old.Artifacts
	}
	if new != nil {
		n = new.Artifacts
	}
	var out []*ObjectDiff
	for i := range max(len(o), len(n)) {
		var a, b *TaskArtifact
		if i < len(o) {
			a = o[i]
		}
		if i < len(n) {
			b = n[i]
		}
		if d := objectDiff("Artifact", flatArtifact(a), flatArtifact(b)); d != nil {
			out = append(out, d)
		}
	}
	return out
}

func flatArtifact(a *TaskArtifact) map[string]string {
	if a == nil {
		return nil
	}
	m := map[string]string{
		"GetterSource":   a.GetterSource,
		"GetterMode":     a.GetterMode,
		"RelativeDest":   a.RelativeDest,
		"GetterInsecure": fmt.Sprint(a.GetterInsecure),
		"Chown":          fmt.Sprint(a.Chown),
	}
	for k, v := range a.GetterOptions {
		m["GetterOptions["+k+"]"] = v
	}
	for k, v := range a.GetterHeaders {
		m["GetterHeaders["+k+"]"] = v
	}
	return m
}
