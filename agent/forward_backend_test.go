package agent

import (
	"context"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/drover-io/drover/client/rpcclient"
	"github.com/drover-io/drover/structs"
)

// recordingCaller records the calls a forwardBackend makes.
type recordingCaller struct {
	err error

	mu      sync.Mutex // guards the fields below
	method  string
	timeout time.Duration
}

func (c *recordingCaller) Call(_ context.Context, method string, _, _ any, timeout time.Duration) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.method, c.timeout = method, timeout
	return c.err
}

// TestForwardBackendMethodNames calls every method of the forwardBackend
// with a zero request and checks that it calls the server method of the
// same name (server.APIRPCs serves them so).
func TestForwardBackendMethodNames(t *testing.T) {
	rc := &recordingCaller{}
	fb := reflect.ValueOf(&forwardBackend{rpc: rc})
	typ := fb.Type()
	for i := range typ.NumMethod() {
		m := typ.Method(i)
		reqType := m.Type.In(2).Elem() // (receiver, ctx, *Req)
		out := fb.Method(i).Call([]reflect.Value{reflect.ValueOf(context.Background()), reflect.New(reqType)})
		if err := out[1].Interface(); err != nil {
			t.Errorf("%s: %v", m.Name, err)
		}
		if rc.method != m.Name {
			t.Errorf("%s called the server's %s", m.Name, rc.method)
		}
	}
}

func TestForwardBackendTimeouts(t *testing.T) {
	tests := []struct {
		name string
		call func(*forwardBackend) error
		want time.Duration
	}{
		{"a read without index uses the default", func(f *forwardBackend) error {
			_, err := f.JobList(context.Background(), &structs.JobListRequest{})
			return err
		}, 0},
		{"a blocking query waits its wait plus slack", func(f *forwardBackend) error {
			_, err := f.JobList(context.Background(), &structs.JobListRequest{QueryOptions: structs.QueryOptions{MinQueryIndex: 7, MaxQueryTime: 2 * time.Minute}})
			return err
		}, rpcclient.BlockingTimeout(2 * time.Minute)},
		{"a blocking query without a wait gets the default wait", func(f *forwardBackend) error {
			_, err := f.AllocGet(context.Background(), &structs.AllocSpecificRequest{QueryOptions: structs.QueryOptions{MinQueryIndex: 7}})
			return err
		}, rpcclient.BlockingTimeout(structs.DefaultBlockingWait)},
		{"a write uses the default", func(f *forwardBackend) error {
			_, err := f.JobRegister(context.Background(), &structs.JobRegisterRequest{})
			return err
		}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rc := &recordingCaller{}
			if err := tt.call(&forwardBackend{rpc: rc}); err != nil {
				t.Fatal(err)
			}
			if rc.timeout != tt.want {
				t.Errorf("timeout = %s, want %s", rc.timeout, tt.want)
			}
		})
	}
}

func TestForwardBackendKeepsErrorKinds(t *testing.T) {
	rc := &recordingCaller{err: structs.NotFound("job", "web")}
	resp, err := (&forwardBackend{rpc: rc}).JobGet(context.Background(), &structs.JobSpecificRequest{JobID: "web"})
	if resp != nil || structs.KindOf(err) != structs.KindNotFound || statusCode(err) != 404 {
		t.Fatalf("JobGet = %v, %v (status %d), want a 404", resp, err, statusCode(err))
	}
}
