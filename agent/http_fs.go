package agent

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"mime"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/drover-io/drover/structs"
)

// allocFileInfo is a file of an allocation directory, as Nomad's
// AllocFileInfo.
type allocFileInfo struct {
	Name        string
	IsDir       bool
	Size        int64
	FileMode    string
	ModTime     time.Time
	ContentType string
}

// confinedPath resolves the user path p (relative to the allocation
// directory root; "" and "/" mean root) to a path inside root. A path that
// leaves root with ".." is rejected, as is one that leads, through a
// symlink, outside root; both are 403. A missing path is 404.
func confinedPath(root, p string) (string, error) {
	if strings.ContainsRune(p, 0) {
		return "", structs.Invalid("path %q contains a NUL byte", p)
	}
	rel := filepath.Clean(strings.TrimPrefix(filepath.ToSlash(p), "/"))
	if rel == ".." || strings.HasPrefix(rel, "../") {
		return "", newHTTPError(http.StatusForbidden, "path %q is outside the allocation directory", p)
	}
	realRoot, err := filepath.EvalSymlinks(root)
	if err != nil {
		return "", fmt.Errorf("resolve allocation directory: %w", err)
	}
	full := filepath.Join(realRoot, rel)
	resolved, err := filepath.EvalSymlinks(full)
	if errors.Is(err, fs.ErrNotExist) {
		return "", structs.NewError(structs.KindNotFound, "no such file or directory in the allocation: %q", p)
	}
	if err != nil {
		return "", fmt.Errorf("resolve path %q: %w", p, err)
	}
	if resolved != realRoot && !strings.HasPrefix(resolved, realRoot+string(filepath.Separator)) {
		return "", newHTTPError(http.StatusForbidden,
			"path %q is a symlink that points outside the allocation directory", p)
	}
	return resolved, nil
}

// allocPath resolves the request's alloc (:id) and ?path to a file inside
// the allocation's directory.
func (s *httpServer) allocPath(req *http.Request) (string, error) {
	alloc, nc, err := s.localAlloc(req)
	if err != nil {
		return "", err
	}
	root, err := nc.AllocDir(alloc.ID)
	if err != nil {
		return "", err
	}
	return confinedPath(root, req.URL.Query().Get("path"))
}

// fileInfo describes fi, found at path.
func fileInfo(path string, fi fs.FileInfo) allocFileInfo {
	info := allocFileInfo{
		Name: fi.Name(), IsDir: fi.IsDir(), Size: fi.Size(),
		FileMode: fi.Mode().String(), ModTime: fi.ModTime(),
	}
	if fi.Mode().IsRegular() {
		info.ContentType = contentType(path)
	}
	return info
}

// contentType guesses a file's MIME type from its extension, else from
// its first bytes.
func contentType(path string) string {
	if t := mime.TypeByExtension(filepath.Ext(path)); t != "" {
		return t
	}
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	buf := make([]byte, 512)
	n, _ := io.ReadFull(f, buf)
	return http.DetectContentType(buf[:n])
}

// fsList is GET /v1/client/fs/ls/:alloc?path=: the []AllocFileInfo of a
// directory, sorted by name.
func (s *httpServer) fsList(_ http.ResponseWriter, req *http.Request) (any, error) {
	dir, err := s.allocPath(req)
	if err != nil {
		return nil, err
	}
	if fi, err := os.Stat(dir); err != nil {
		return nil, fmt.Errorf("stat: %w", err)
	} else if !fi.IsDir() {
		return nil, structs.Invalid("path %q is a file, not a directory: read it with cat", req.URL.Query().Get("path"))
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("list directory: %w", err)
	}
	out := make([]allocFileInfo, 0, len(entries))
	for _, e := range entries {
		fi, err := e.Info()
		if err != nil {
			continue // removed since it was listed
		}
		out = append(out, fileInfo(filepath.Join(dir, e.Name()), fi))
	}
	slices.SortFunc(out, func(a, b allocFileInfo) int { return strings.Compare(a.Name, b.Name) })
	return out, nil
}

// fsStat is GET /v1/client/fs/stat/:alloc?path=: one AllocFileInfo.
func (s *httpServer) fsStat(_ http.ResponseWriter, req *http.Request) (any, error) {
	path, err := s.allocPath(req)
	if err != nil {
		return nil, err
	}
	fi, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("stat: %w", err)
	}
	return fileInfo(path, fi), nil
}

// fsCat is GET /v1/client/fs/cat/:alloc?path=: a file's contents.
func (s *httpServer) fsCat(w http.ResponseWriter, req *http.Request) {
	s.serveFileRange(w, req, false)
}

// fsReadAt is GET /v1/client/fs/readat/:alloc?path=&offset=&limit=: limit
// bytes of a file from offset (to its end when limit is 0 or absent).
func (s *httpServer) fsReadAt(w http.ResponseWriter, req *http.Request) {
	s.serveFileRange(w, req, true)
}

func (s *httpServer) serveFileRange(w http.ResponseWriter, req *http.Request, ranged bool) {
	var offset, limit int64
	if ranged {
		var err error
		if offset, err = int64Param(req, "offset"); err != nil {
			writeError(w, req, err)
			return
		}
		if limit, err = int64Param(req, "limit"); err != nil {
			writeError(w, req, err)
			return
		}
	}
	path, err := s.allocPath(req)
	if err != nil {
		writeError(w, req, err)
		return
	}
	f, err := os.Open(path)
	if err != nil {
		writeError(w, req, fmt.Errorf("open file: %w", err))
		return
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		writeError(w, req, fmt.Errorf("stat file: %w", err))
		return
	}
	if fi.IsDir() {
		writeError(w, req, structs.Invalid("path %q is a directory: list it with ls", req.URL.Query().Get("path")))
		return
	}
	if _, err := f.Seek(offset, io.SeekStart); err != nil {
		writeError(w, req, fmt.Errorf("seek to %d: %w", offset, err))
		return
	}
	var r io.Reader = f
	if limit > 0 {
		r = io.LimitReader(f, limit)
	}
	w.Header().Set("Content-Type", "application/octet-stream")
	if _, err := io.Copy(w, r); err != nil {
		s.logger.Debug("file read ended early", "path", req.URL.Path, "error", err)
	}
}

// int64Param parses a non-negative integer query parameter; absent is 0.
func int64Param(req *http.Request, name string) (int64, error) {
	v := req.URL.Query().Get(name)
	if v == "" {
		return 0, nil
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < 0 {
		return 0, structs.Invalid("%s=%q is invalid: want a non-negative integer", name, v)
	}
	return n, nil
}
