package grpcdriver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"testing"
	"time"

	"go.uber.org/goleak"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/test/bufconn"

	"github.com/drover-io/drover/drivers/mock"
	"github.com/drover-io/drover/plugins/drivers"
	"github.com/drover-io/drover/plugins/drivers/conformance"
	"github.com/drover-io/drover/plugins/drivers/proto"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// serve serves impl on an in-memory listener and returns a Client of it;
// stop ends the server (as a plugin's death would) and is idempotent.
func serve(t *testing.T, impl drivers.DriverPlugin) (c *Client, stop func()) {
	t.Helper()
	lis := bufconn.Listen(1 << 20)
	srv := grpc.NewServer()
	proto.RegisterDriverServer(srv, NewServer(impl))
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = srv.Serve(lis)
	}()
	conn, err := grpc.NewClient("passthrough:///bufnet",
		grpc.WithContextDialer(func(ctx context.Context, _ string) (net.Conn, error) { return lis.DialContext(ctx) }),
		grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	stop = func() {
		srv.Stop()
		<-done
	}
	t.Cleanup(func() {
		conn.Close()
		stop()
	})
	return NewClient(conn), stop
}

func TestConformance_MockOverGRPC(t *testing.T) {
	conformance.RunConformance(t, func(t *testing.T) drivers.DriverPlugin {
		d := mock.New(nil)
		t.Cleanup(d.Shutdown)
		c, _ := serve(t, d)
		return c
	}, &conformance.Spec{
		RunForever:      json.RawMessage(`{"run_for":"1h"}`),
		ExitZero:        json.RawMessage(`{"run_for":"10ms"}`),
		ExitThree:       json.RawMessage(`{"run_for":"10ms","exit_code":3}`),
		ExecCommand:     []string{"true"},
		ExecEchoCommand: []string{"cat"},
	})
}

// failingStop is the mock driver whose StopTask fails with err.
type failingStop struct {
	*mock.Driver
	err error
}

func (f *failingStop) StopTask(context.Context, string, time.Duration, string) error { return f.err }

func TestErrorKinds(t *testing.T) {
	base := errors.New("boom")
	cases := []struct {
		name            string
		err             error
		is              []error
		wantRecoverable *bool
		wantMsg         string
	}{
		{"not found", fmt.Errorf("stop task %q: %w", "x", drivers.ErrTaskNotFound),
			[]error{drivers.ErrTaskNotFound}, nil, `stop task "x": task not found`},
		{"not supported", fmt.Errorf("exec: %w", drivers.ErrNotSupported),
			[]error{drivers.ErrNotSupported}, nil, "exec: operation not supported by this driver"},
		{"recoverable", fmt.Errorf("pull: %w", drivers.NewRecoverableError(base, true)),
			nil, ptr(true), "pull: boom"},
		{"unrecoverable", drivers.NewRecoverableError(base, false), nil, ptr(false), "boom"},
		{"recoverable not found", drivers.NewRecoverableError(drivers.ErrTaskNotFound, true),
			[]error{drivers.ErrTaskNotFound}, ptr(true), "task not found"},
		{"deadline", fmt.Errorf("stop: %w", context.DeadlineExceeded), []error{context.DeadlineExceeded}, nil, "stop: context deadline exceeded"},
		{"canceled", context.Canceled, []error{context.Canceled}, nil, "context canceled"},
		{"plain", base, nil, nil, "boom"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			d := mock.New(nil)
			t.Cleanup(d.Shutdown)
			c, _ := serve(t, &failingStop{Driver: d, err: tc.err})
			err := c.StopTask(context.Background(), "x", time.Second, "")
			if err == nil {
				t.Fatal("StopTask succeeded")
			}
			if err.Error() != tc.wantMsg {
				t.Errorf("message = %q, want %q", err, tc.wantMsg)
			}
			for _, target := range tc.is {
				if !errors.Is(err, target) {
					t.Errorf("errors.Is(%v, %v) = false", err, target)
				}
			}
			if errors.Is(err, drivers.ErrPluginUnavailable) {
				t.Errorf("driver error %v reads as plugin unavailable", err)
			}
			var re *drivers.RecoverableError
			gotRecoverable := errors.As(err, &re)
			switch {
			case tc.wantRecoverable == nil && gotRecoverable:
				t.Errorf("error %v became a RecoverableError", err)
			case tc.wantRecoverable != nil && !gotRecoverable:
				t.Errorf("error %v lost its RecoverableError", err)
			case tc.wantRecoverable != nil && re.Recoverable != *tc.wantRecoverable:
				t.Errorf("Recoverable = %v, want %v", re.Recoverable, *tc.wantRecoverable)
			}
		})
	}
}

func ptr[T any](v T) *T { return &v }

func TestStartErrorRecoverable(t *testing.T) {
	d := mock.New(nil)
	t.Cleanup(d.Shutdown)
	c, _ := serve(t, d)
	cfg := &drivers.TaskConfig{ID: "a/web/1", Name: "web",
		RawConfig: json.RawMessage(`{"start_error":"no image","start_error_recoverable":true}`)}
	_, err := c.StartTask(context.Background(), cfg)
	if !drivers.IsRecoverable(err) || err.Error() != "no image" {
		t.Fatalf("StartTask err = %v, want recoverable \"no image\"", err)
	}
}

func TestTaskEventsNotSupported(t *testing.T) {
	d := mock.New(nil)
	t.Cleanup(d.Shutdown)
	c, _ := serve(t, d)
	if _, err := c.TaskEvents(context.Background()); !errors.Is(err, drivers.ErrNotSupported) {
		t.Fatalf("TaskEvents of a driver without events: err = %v, want ErrNotSupported", err)
	}
}

// eventsDriver is the mock driver with a TaskEvents stream fed by events.
type eventsDriver struct {
	*mock.Driver
	events chan *drivers.TaskEvent
}

func (e *eventsDriver) TaskEvents(ctx context.Context) (<-chan *drivers.TaskEvent, error) {
	return e.events, nil
}

func TestTaskEvents(t *testing.T) {
	d := mock.New(nil)
	t.Cleanup(d.Shutdown)
	ed := &eventsDriver{Driver: d, events: make(chan *drivers.TaskEvent, 2)}
	c, _ := serve(t, ed)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ch, err := c.TaskEvents(ctx)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Unix(1700000000, 5).UTC()
	want := []*drivers.TaskEvent{
		{TaskID: "a/web/1", AllocID: "a", TaskName: "web", Timestamp: now, Message: "pulling image",
			Annotations: map[string]string{"image": "redis"}},
		{TaskID: "a/web/1", Message: "OOM", Err: errors.New("killed")},
	}
	for _, ev := range want {
		ed.events <- ev
	}
	for i, w := range want {
		got := <-ch
		if got.TaskID != w.TaskID || got.Message != w.Message || !got.Timestamp.Equal(w.Timestamp) ||
			got.Annotations["image"] != w.Annotations["image"] || (got.Err == nil) != (w.Err == nil) {
			t.Errorf("event %d = %+v, want %+v", i, got, w)
		}
	}
	cancel()
	for range ch {
	}
}

func TestPluginGone(t *testing.T) {
	d := mock.New(nil)
	t.Cleanup(d.Shutdown)
	c, stop := serve(t, d)
	ctx := context.Background()
	if _, err := c.StartTask(ctx, &drivers.TaskConfig{ID: "a/web/1", Name: "web", RawConfig: runsUntilStopped(t)}); err != nil {
		t.Fatal(err)
	}
	fpCtx, fpCancel := context.WithCancel(ctx)
	defer fpCancel()
	fps, err := c.Fingerprint(fpCtx)
	if err != nil {
		t.Fatal(err)
	}
	if fp := <-fps; fp.Health != drivers.HealthStateHealthy {
		t.Fatalf("first fingerprint %+v", fp)
	}
	waitCh, err := c.WaitTask(ctx, "a/web/1")
	if err != nil {
		t.Fatal(err)
	}

	stop()

	res, ok := <-waitCh
	if !ok || res == nil || !errors.Is(res.Err, drivers.ErrPluginUnavailable) {
		t.Fatalf("wait after the plugin died = %+v, %v; want an Err wrapping ErrPluginUnavailable", res, ok)
	}
	if _, ok := <-waitCh; ok {
		t.Fatal("wait channel not closed after its result")
	}
	fp, ok := <-fps
	if !ok || fp.Health != drivers.HealthStateUnhealthy {
		t.Fatalf("fingerprint after the plugin died = %+v, %v; want unhealthy", fp, ok)
	}
	if _, ok := <-fps; ok {
		t.Fatal("fingerprint channel not closed after the plugin died")
	}
	if _, err := c.InspectTask(ctx, "a/web/1"); !errors.Is(err, drivers.ErrPluginUnavailable) {
		t.Fatalf("InspectTask after the plugin died: err = %v, want ErrPluginUnavailable", err)
	}
	if c.Capabilities().Exec {
		t.Fatal("Capabilities of a dead plugin claims exec")
	}
}

// TestConnectionClosedUnderACall: the agent closes its connection to a
// plugin it found dead (Instance.Kill after the process exited) before
// gRPC has read the end of the socket. The calls in flight then fail with
// the connection's closing, not with their caller's cancellation: that is
// the plugin going away, and the driver manager must wait for its next
// instance rather than hand the task's waiter a result.
func TestConnectionClosedUnderACall(t *testing.T) {
	d := mock.New(nil)
	t.Cleanup(d.Shutdown)
	lis := bufconn.Listen(1 << 20)
	srv := grpc.NewServer()
	proto.RegisterDriverServer(srv, NewServer(d))
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = srv.Serve(lis)
	}()
	t.Cleanup(func() {
		srv.Stop()
		<-done
	})
	conn, err := grpc.NewClient("passthrough:///bufnet",
		grpc.WithContextDialer(func(ctx context.Context, _ string) (net.Conn, error) { return lis.DialContext(ctx) }),
		grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	c := NewClient(conn)
	ctx := context.Background()
	if _, err := c.StartTask(ctx, &drivers.TaskConfig{ID: "a/web/1", Name: "web", RawConfig: runsUntilStopped(t)}); err != nil {
		t.Fatal(err)
	}
	waitCh, err := c.WaitTask(ctx, "a/web/1")
	if err != nil {
		t.Fatal(err)
	}
	conn.Close()
	res, ok := <-waitCh
	if !ok || res == nil || !errors.Is(res.Err, drivers.ErrPluginUnavailable) {
		t.Fatalf("wait after the connection closed = %+v, %v; want an Err wrapping ErrPluginUnavailable", res, ok)
	}
	if _, err := c.InspectTask(ctx, "a/web/1"); !errors.Is(err, drivers.ErrPluginUnavailable) {
		t.Fatalf("InspectTask on the closed connection: err = %v, want ErrPluginUnavailable", err)
	}
}

// runsUntilStopped is the config of a mock task that runs until stopped
// (without run_for a mock task exits at once).
func runsUntilStopped(t *testing.T) []byte {
	t.Helper()
	raw, err := json.Marshal(mock.UntilStopped(nil))
	if err != nil {
		t.Fatal(err)
	}
	return raw
}
