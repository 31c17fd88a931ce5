package client

import (
	"context"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/drover-io/drover/structs"
)

// syncClient is a Client with only what its sync loop needs, on srv.
func syncClient(srv *fakeServer) *Client {
	ctx, cancel := context.WithCancel(context.Background())
	return &Client{
		logger:         slog.New(slog.DiscardHandler),
		rpc:            srv,
		node:           &structs.Node{ID: "node-1", SecretID: "secret"},
		jitter:         func(time.Duration) time.Duration { return 0 },
		updateInterval: 20 * time.Millisecond,
		retryBase:      500 * time.Millisecond,
		retryMax:       5 * time.Second,
		ctx:            ctx,
		cancel:         cancel,
		queued:         make(chan struct{}, 1),
		pending:        make(map[string]*structs.Allocation),
	}
}

// sent returns, per batch the fake server received, its time since t0 and
// the IDs and statuses it held.
func sent(srv *fakeServer, t0 time.Time) []string {
	srv.mu.Lock()
	defer srv.mu.Unlock()
	var out []string
	for i, b := range srv.batches {
		var ids []string
		for _, a := range b {
			ids = append(ids, a.ID+"="+a.ClientStatus)
		}
		slices.Sort(ids)
		out = append(out, srv.batchTimes[i].Sub(t0).String()+" "+strings.Join(ids, ","))
	}
	return out
}

type queuedUpdate struct {
	at     time.Duration // after t0
	id     string
	status string
}

func TestSyncLoopSendsAtOnceAndBatchesUnderLoad(t *testing.T) {
	const (
		pending = structs.AllocClientStatusPending
		running = structs.AllocClientStatusRunning
	)
	cases := []struct {
		name       string
		updateErrs int
		updates    []queuedUpdate
		want       []string
	}{
		{
			name:    "a lone update goes at once",
			updates: []queuedUpdate{{0, "a", running}},
			want:    []string{"0s a=running"},
		},
		{
			// Before: every update waited for the next 200ms tick.
			name:    "updates further apart than the interval go each at once",
			updates: []queuedUpdate{{0, "a", pending}, {30 * time.Millisecond, "a", running}, {100 * time.Millisecond, "b", running}},
			want:    []string{"0s a=pending", "30ms a=running", "100ms b=running"},
		},
		{
			name: "a burst: the first at once, the rest together after the interval, latest state each",
			updates: []queuedUpdate{
				{0, "a", pending}, {time.Millisecond, "b", pending}, {2 * time.Millisecond, "a", running},
				{5 * time.Millisecond, "c", running}, {25 * time.Millisecond, "d", running},
			},
			want: []string{"0s a=pending", "20ms a=running,b=pending,c=running", "40ms d=running"},
		},
		{
			name:       "a failed batch is retried after the backoff with what was queued meanwhile",
			updateErrs: 1,
			updates:    []queuedUpdate{{0, "a", running}, {100 * time.Millisecond, "b", running}},
			want:       []string{"500ms a=running,b=running"},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				srv := newFakeServer()
				srv.updateErrs = tc.updateErrs
				c := syncClient(srv)
				c.wg.Add(1)
				go c.syncLoop()
				t0 := time.Now()
				for _, u := range tc.updates {
					time.Sleep(t0.Add(u.at).Sub(time.Now()))
					c.queueUpdate(&structs.Allocation{ID: u.id, ClientStatus: u.status})
					synctest.Wait()
				}
				time.Sleep(time.Second) // fake time: let every retry happen
				if got := sent(srv, t0); !slices.Equal(got, tc.want) {
					t.Errorf("batches sent:\n got %q\nwant %q", got, tc.want)
				}
				c.cancel()
				c.wg.Wait()
			})
		})
	}
}
