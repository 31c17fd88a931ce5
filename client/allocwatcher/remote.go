package allocwatcher

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/drover-io/drover/client/allocdir"
)

// SnapshotPath returns the client HTTP API path of an allocation's data
// snapshot.
func SnapshotPath(allocID string) string {
	return "/v1/client/allocation/" + url.PathEscape(allocID) + "/snapshot"
}

// remoteWatcher follows an allocation on another node through the
// servers, and downloads its data from that node's agent.
type remoteWatcher struct {
	prevID  string
	nodeID  string // this node
	servers ServerLookup
	hc      *http.Client
	migrate bool
	tasks   []string
	limit   int64
	retry   time.Duration
	logger  *slog.Logger

	waiting   atomic.Bool
	migrating atomic.Bool

	mu       sync.Mutex // guards the field below
	prevNode string     // the node the previous alloc ran on, once known
}

var _ PrevAllocWatcher = (*remoteWatcher)(nil)

// Wait returns when the servers report the previous allocation terminal on
// its client (complete, failed or lost) or no longer know it.
func (w *remoteWatcher) Wait(ctx context.Context) error {
	w.waiting.Store(true)
	defer w.waiting.Store(false)
	var index uint64
	for {
		a, idx, err := w.servers.AllocByID(ctx, w.prevID, index)
		if ctx.Err() != nil {
			return fmt.Errorf("wait for alloc %s: %w", w.prevID, ctx.Err())
		}
		if err != nil {
			w.logger.Warn("looking up previous alloc failed; retrying", "error", err)
			timer := time.NewTimer(w.retry)
			select {
			case <-ctx.Done():
				timer.Stop()
				return fmt.Errorf("wait for alloc %s: %w", w.prevID, ctx.Err())
			case <-timer.C:
			}
			continue
		}
		if a == nil {
			w.logger.Debug("previous alloc is gone from the servers")
			return nil
		}
		w.mu.Lock()
		w.prevNode = a.NodeID
		w.mu.Unlock()
		if a.ClientTerminalStatus() {
			w.logger.Debug("previous alloc terminated", "client_status", a.ClientStatus, "node_id", a.NodeID)
			return nil
		}
		// Never 0: a MinQueryIndex of 0 does not block, and would spin.
		index = max(idx, index+1, 1)
	}
}

// IsWaiting reports whether Wait is blocked.
func (w *remoteWatcher) IsWaiting() bool { return w.waiting.Load() }

// IsMigrating reports whether Migrate is running.
func (w *remoteWatcher) IsMigrating() bool { return w.migrating.Load() }

// Migrate downloads the previous allocation's snapshot from its node's
// agent and unpacks it into dest, when the group's disk is sticky and
// migrate. A node that cannot be reached, or no longer has the data, is
// logged and skipped (the data is lost, as when a node dies); a snapshot
// that fails to unpack is an error.
func (w *remoteWatcher) Migrate(ctx context.Context, dest *allocdir.AllocDir) error {
	w.mu.Lock()
	node := w.prevNode
	w.mu.Unlock()
	if !w.migrate || node == "" || node == w.nodeID {
		return nil
	}
	w.migrating.Store(true)
	defer w.migrating.Store(false)
	addr, err := w.servers.NodeHTTPAddr(ctx, node)
	if err != nil {
		w.logger.Warn("cannot migrate data: previous node's address unknown", "prev_node_id", node, "error", err)
		return nil
	}
	body, err := w.fetch(ctx, addr)
	if err != nil {
		w.logger.Warn("cannot migrate data: snapshot download failed", "prev_node_id", node, "error", err)
		return nil
	}
	defer body.Close()
	if err := Unpack(body, dest.AllocDir, UnpackLimits{MaxBytes: w.limit, Tasks: w.tasks}); err != nil {
		return fmt.Errorf("migrate data of alloc %s from node %s: %w", w.prevID, node, err)
	}
	w.logger.Info("migrated previous alloc's data", "prev_node_id", node, "from", addr)
	return nil
}

// fetch starts the snapshot download and returns its body.
func (w *remoteWatcher) fetch(ctx context.Context, addr string) (io.ReadCloser, error) {
	base := addr
	if !strings.Contains(base, "://") {
		base = "http://" + base
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimSuffix(base, "/")+SnapshotPath(w.prevID), nil)
	if err != nil {
		return nil, err
	}
	resp, err := w.hc.Do(req)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		msg, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		resp.Body.Close()
		return nil, fmt.Errorf("GET %s: %s: %s", req.URL, resp.Status, strings.TrimSpace(string(msg)))
	}
	return resp.Body, nil
}
