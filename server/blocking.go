package server

import (
	"context"
	"math/rand/v2"
	"time"

	memdb "github.com/hashicorp/go-memdb"

	"github.com/drover-io/drover/server/state"
	"github.com/drover-io/drover/structs"
)

// queryFunc runs one read of a blocking query, adding what it read to ws,
// and returns the index of the data it read.
type queryFunc func(ws memdb.WatchSet, st *state.StateStore) (uint64, error)

// blockingQuery runs fn, and while the index it returns is not above
// opts.MinQueryIndex, waits for what it read to change and runs it again,
// until opts.MaxQueryTime (default 5m, at most 10m, plus up to 1/16 of
// jitter) passes. It always fills meta: Index is the data's index, 0 for
// data never written (as Nomad answers a list of an empty table), and a
// query with MinQueryIndex 1 or more waits on such data too. A not-found
// error does not end the wait: the object may appear. Cancelling ctx
// returns ctx's error.
func (s *Server) blockingQuery(ctx context.Context, opts *structs.QueryOptions, meta *structs.QueryMeta, fn queryFunc) error {
	var qctx context.Context = ctx
	if opts.MinQueryIndex > 0 {
		wait := opts.MaxQueryTime
		if wait <= 0 {
			wait = structs.DefaultBlockingWait
		}
		if wait > structs.MaxBlockingWait {
			wait = structs.MaxBlockingWait
		}
		if j := int64(wait / 16); j > 0 {
			wait += time.Duration(rand.Int64N(j))
		}
		var cancel context.CancelFunc
		qctx, cancel = context.WithTimeout(ctx, wait)
		defer cancel()
	}
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		// One consistent view per pass: reading the live store, a write
		// between the query's reads and its index read returned the old
		// rows under the new index, and the caller never asked again.
		st := s.fsm.State().View()
		ws := memdb.NewWatchSet()
		ws.Add(st.AbandonCh())
		index, err := fn(ws, st)
		meta.Index = index
		meta.KnownLeader = s.knownLeader()
		meta.LastContact = s.lastContact()
		if err != nil && structs.KindOf(err) != structs.KindNotFound {
			return err
		}
		if opts.MinQueryIndex == 0 || index > opts.MinQueryIndex {
			return err
		}
		if werr := ws.WatchCtx(qctx); werr != nil {
			if cerr := ctx.Err(); cerr != nil {
				return cerr
			}
			return err // timed out: return what we have
		}
	}
}

// namespaceOf returns the request's namespace, "default" when unset.
func namespaceOf(opts *structs.QueryOptions) string {
	if opts.Namespace == "" {
		return structs.DefaultNamespace
	}
	return opts.Namespace
}

// inNamespace reports whether an object of namespace ns is listed for a
// request of namespace want ("*" lists all).
func inNamespace(want, ns string) bool { return want == "*" || want == ns }
