package httpapi

import (
	"io"
	"net/http"
	"strings"

	"github.com/drover-io/drover/client/allocwatcher"
)

// registerSnapshotRoute adds GET /v1/client/allocation/:id/snapshot, which
// the replacement of a sticky, migrating allocation on another node calls
// to fetch the allocation's data as a tar.gz.
func (s *Server) registerSnapshotRoute(rt *router) {
	// The path the replacement's client fetches (allocwatcher), with the
	// {id} wildcard.
	pattern := strings.Replace(allocwatcher.SnapshotPath("_"), "/_/", "/{id}/", 1)
	rt.handle(pattern, http.HandlerFunc(s.clientAllocSnapshot), http.MethodGet)
}

// clientAllocSnapshot streams the snapshot of an allocation this agent's
// client runs (the full ID is required: the caller is another client).
func (s *Server) clientAllocSnapshot(w http.ResponseWriter, req *http.Request) {
	nc, err := s.localClient()
	if err != nil {
		writeError(w, req, err)
		return
	}
	id := req.PathValue("id")
	if _, err := nc.AllocDir(id); err != nil {
		writeError(w, req, err)
		return
	}
	w.Header().Set("Content-Type", "application/gzip")
	cw := &countingWriter{w: w}
	if err := nc.SnapshotAlloc(id, cw); err != nil {
		if cw.n == 0 {
			writeError(w, req, err)
			return
		}
		// The status is sent: abort the connection so that the caller
		// sees a truncated stream rather than a complete one.
		s.logger.Warn("alloc snapshot failed mid-stream", "alloc_id", id, "error", err)
		panic(http.ErrAbortHandler)
	}
}

// countingWriter counts the bytes written through it.
type countingWriter struct {
	w io.Writer
	n int64
}

// Write writes p and counts it.
func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}
