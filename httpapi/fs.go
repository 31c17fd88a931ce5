package httpapi

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"mime"
	"net/http"
	"path"
	"strconv"
	"time"

	"github.com/drover-io/drover/client/allocdir"
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

// allocViewer opens the directory of the request's alloc (:id) for
// reading. The user's ?path is resolved by the Viewer: confined to the
// alloc directory (links out and ".." out are 403), never through a link
// swapped in meanwhile, Drover's own files hidden (404).
func (s *Server) allocViewer(req *http.Request) (*allocdir.Viewer, error) {
	alloc, nc, err := s.localAlloc(req)
	if err != nil {
		return nil, err
	}
	root, err := nc.AllocDir(alloc.ID)
	if err != nil {
		return nil, err
	}
	v, err := allocdir.OpenViewer(root)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, structs.NewError(structs.KindNotFound, "allocation %s has no directory on this node", alloc.ID)
	}
	return v, err
}

// fsError gives a Viewer's error its HTTP kind.
func fsError(err error) error {
	switch {
	case errors.Is(err, allocdir.ErrOutside):
		return newHTTPError(http.StatusForbidden, "%s", err.Error())
	case errors.Is(err, fs.ErrNotExist):
		return structs.NewError(structs.KindNotFound, "%s", err.Error())
	case errors.Is(err, allocdir.ErrBadPath), errors.Is(err, allocdir.ErrNotRegular):
		return structs.Invalid("%s", err.Error())
	}
	return err
}

// fileInfo describes fi; contentType is asked for regular files only.
func fileInfo(fi fs.FileInfo, contentType func() string) allocFileInfo {
	info := allocFileInfo{
		Name: fi.Name(), IsDir: fi.IsDir(), Size: fi.Size(),
		FileMode: fi.Mode().String(), ModTime: fi.ModTime(),
	}
	if fi.Mode().IsRegular() {
		info.ContentType = contentType()
	}
	return info
}

// contentType guesses the MIME type of the file name (in v) from its
// extension, else from its first bytes.
func contentType(v *allocdir.Viewer, name string) string {
	if t := mime.TypeByExtension(path.Ext(name)); t != "" {
		return t
	}
	f, _, err := v.Open(name)
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
func (s *Server) fsList(_ http.ResponseWriter, req *http.Request) (any, error) {
	v, err := s.allocViewer(req)
	if err != nil {
		return nil, err
	}
	defer v.Close()
	p := req.URL.Query().Get("path")
	entries, dir, err := v.List(p)
	if errors.Is(err, allocdir.ErrNotDir) {
		return nil, structs.Invalid("path %q is a file, not a directory: read it with cat", p)
	}
	if err != nil {
		return nil, fsError(err)
	}
	out := make([]allocFileInfo, 0, len(entries))
	for _, e := range entries {
		out = append(out, fileInfo(e, func() string { return contentType(v, path.Join(dir, e.Name())) }))
	}
	return out, nil
}

// fsStat is GET /v1/client/fs/stat/:alloc?path=: one AllocFileInfo.
func (s *Server) fsStat(_ http.ResponseWriter, req *http.Request) (any, error) {
	v, err := s.allocViewer(req)
	if err != nil {
		return nil, err
	}
	defer v.Close()
	p := req.URL.Query().Get("path")
	fi, err := v.Stat(p)
	if err != nil {
		return nil, fsError(err)
	}
	return fileInfo(fi, func() string { return contentType(v, p) }), nil
}

// fsCat is GET /v1/client/fs/cat/:alloc?path=: a file's contents.
func (s *Server) fsCat(w http.ResponseWriter, req *http.Request) {
	s.serveFileRange(w, req, false)
}

// fsReadAt is GET /v1/client/fs/readat/:alloc?path=&offset=&limit=: limit
// bytes of a file from offset (to its end when limit is 0 or absent).
func (s *Server) fsReadAt(w http.ResponseWriter, req *http.Request) {
	s.serveFileRange(w, req, true)
}

func (s *Server) serveFileRange(w http.ResponseWriter, req *http.Request, ranged bool) {
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
	v, err := s.allocViewer(req)
	if err != nil {
		writeError(w, req, err)
		return
	}
	defer v.Close()
	p := req.URL.Query().Get("path")
	f, _, err := v.Open(p)
	if errors.Is(err, allocdir.ErrIsDir) {
		writeError(w, req, structs.Invalid("path %q is a directory: list it with ls", p))
		return
	}
	if err != nil {
		writeError(w, req, fsError(err))
		return
	}
	defer f.Close()
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
