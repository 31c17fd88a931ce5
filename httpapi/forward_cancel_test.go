package httpapi

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/drover-io/drover/client/rpcclient"
	"github.com/drover-io/drover/rpcapi"
	"github.com/drover-io/drover/structs"
)

// blockingServer is a server whose JobList blocks until its caller goes
// away, and reports the query it got and that its context ended.
type blockingServer struct {
	got   chan structs.QueryOptions
	ended chan struct{}
}

func (s *blockingServer) JobList(ctx context.Context, r *structs.JobListRequest) (*structs.JobListResponse, error) {
	s.got <- r.QueryOptions
	<-ctx.Done()
	close(s.ended)
	return nil, ctx.Err()
}

// TestForwardedBlockingQueryCancels: a client-only agent forwards a
// blocking query to the server's RPC handler with its wait, and when the
// HTTP caller goes away the query ends on the server too.
func TestForwardedBlockingQueryCancels(t *testing.T) {
	srv := &blockingServer{got: make(chan structs.QueryOptions, 1), ended: make(chan struct{})}
	h := rpcapi.NewHandlers()
	rpcapi.Handle(h, rpcapi.JobList, srv.JobList)
	rpcTS := httptest.NewServer(rpcapi.NewHTTPHandler(h, nil))
	defer rpcTS.Close()
	rc, err := rpcclient.New(&rpcclient.Config{Servers: []string{strings.TrimPrefix(rpcTS.URL, "http://")}})
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	_, apiTS := serveAPI(t, rc, nil)

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, apiTS.URL+"/v1/jobs?index=42&wait=90s", nil)
	if err != nil {
		t.Fatal(err)
	}
	errc := make(chan error, 1)
	go func() {
		resp, err := apiTS.Client().Do(req)
		if err == nil {
			resp.Body.Close()
		}
		errc <- err
	}()
	select {
	case q := <-srv.got:
		if q.MinQueryIndex != 42 || q.MaxQueryTime != 90*time.Second {
			t.Errorf("the server got index %d wait %s, want 42 and 90s", q.MinQueryIndex, q.MaxQueryTime)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the blocking query did not reach the server")
	}
	cancel()
	select {
	case <-srv.ended:
	case <-time.After(10 * time.Second):
		t.Fatal("the server's blocking query did not end when the HTTP caller went away")
	}
	if err := <-errc; err == nil {
		t.Error("the cancelled request succeeded")
	}
}
