package drivermanager

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/drover-io/drover/drivers/mock"
	"github.com/drover-io/drover/plugins/drivers"
)

// flakyDriver is the mock driver whose calls fail as a dead plugin's do
// once killed, and whose open waits then deliver the transport error a
// dead plugin's would.
type flakyDriver struct {
	*mock.Driver
	dead     chan struct{}
	killOnce sync.Once
	mu       sync.Mutex // guards the fields below
	starts   int
	waits    int
}

func newFlaky(d *mock.Driver) *flakyDriver {
	return &flakyDriver{Driver: d, dead: make(chan struct{})}
}

var errDead = fmt.Errorf("rpc error: connection refused: %w", drivers.ErrPluginUnavailable)

func (f *flakyDriver) kill() { f.killOnce.Do(func() { close(f.dead) }) }

func (f *flakyDriver) isDown() bool {
	select {
	case <-f.dead:
		return true
	default:
		return false
	}
}

func (f *flakyDriver) StartTask(ctx context.Context, cfg *drivers.TaskConfig) (*drivers.TaskHandle, error) {
	f.mu.Lock()
	f.starts++
	f.mu.Unlock()
	if f.isDown() {
		return nil, errDead
	}
	return f.Driver.StartTask(ctx, cfg)
}

func (f *flakyDriver) InspectTask(ctx context.Context, id string) (*drivers.TaskStatus, error) {
	if f.isDown() {
		return nil, errDead
	}
	return f.Driver.InspectTask(ctx, id)
}

func (f *flakyDriver) WaitTask(ctx context.Context, id string) (<-chan *drivers.ExitResult, error) {
	if f.isDown() {
		return nil, errDead
	}
	inner, err := f.Driver.WaitTask(ctx, id)
	if err != nil {
		return nil, err
	}
	f.mu.Lock()
	f.waits++
	f.mu.Unlock()
	out := make(chan *drivers.ExitResult, 1)
	go func() {
		defer close(out)
		select {
		case res, ok := <-inner:
			if ok {
				out <- res
			}
		case <-f.dead:
			out <- &drivers.ExitResult{Err: errDead}
		}
	}()
	return out, nil
}

func TestProxy_FollowsRestarts(t *testing.T) {
	done := make(chan struct{})
	defer close(done)
	p := newProxy("flaky", true, done)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()

	tasks := mock.New(nil) // the tasks outlive the plugin instances
	defer tasks.Shutdown()
	first := newFlaky(tasks)
	p.publish(first)
	cfg := &drivers.TaskConfig{ID: "a1/web/1", Name: "web", AllocID: "a1", RawConfig: json.RawMessage(`{"run_for":"1h"}`)}
	if _, err := p.StartTask(ctx, cfg); err != nil {
		t.Fatal(err)
	}
	waitCh, err := p.WaitTask(ctx, cfg.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got := p.knownHandles(); len(got) != 1 || got[0].Config.ID != cfg.ID {
		t.Fatalf("known handles = %+v, want the started task", got)
	}

	// The plugin dies and the manager withdraws it: calls wait for the
	// next instance, or give up with the caller's context.
	first.kill()
	p.withdraw()
	inspected := make(chan error, 1)
	go func() {
		_, err := p.InspectTask(ctx, cfg.ID)
		inspected <- err
	}()
	short, cancelShort := context.WithTimeout(ctx, 20*time.Millisecond)
	_, err = p.StartTask(short, &drivers.TaskConfig{ID: "a1/web/2"})
	cancelShort()
	if !errors.Is(err, drivers.ErrPluginUnavailable) || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("StartTask while the plugin is down = %v, want unavailable after the deadline", err)
	}

	second := newFlaky(tasks)
	p.publish(second)
	if err := <-inspected; err != nil {
		t.Fatalf("InspectTask across the restart: %v", err)
	}
	if err := p.StopTask(ctx, cfg.ID, time.Second, "SIGTERM"); err != nil {
		t.Fatal(err)
	}
	select {
	case res := <-waitCh:
		if res == nil || res.Err != nil || res.Signal == 0 {
			t.Fatalf("exit after the restart = %+v, want the task's signal exit", res)
		}
	case <-ctx.Done():
		t.Fatal("the wait did not resume on the new instance")
	}
	second.mu.Lock()
	waits := second.waits
	second.mu.Unlock()
	if waits != 1 {
		t.Fatalf("waits opened on the new instance = %d, want 1", waits)
	}
	if err := p.DestroyTask(ctx, cfg.ID, true); err != nil {
		t.Fatal(err)
	}
	if got := p.knownHandles(); len(got) != 0 {
		t.Fatalf("known handles after destroy = %+v", got)
	}
}

func TestProxy_StartTaskNotRetried(t *testing.T) {
	done := make(chan struct{})
	defer close(done)
	p := newProxy("flaky", true, done)
	d := newFlaky(mock.New(nil))
	defer d.Shutdown()
	p.publish(d)
	d.kill()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, err := p.StartTask(ctx, &drivers.TaskConfig{ID: "a1/web/1"})
	if !errors.Is(err, drivers.ErrPluginUnavailable) {
		t.Fatalf("StartTask on a dead plugin = %v, want ErrPluginUnavailable", err)
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.starts != 1 {
		t.Fatalf("StartTask calls = %d, want 1", d.starts)
	}
}

func TestProxy_ShutdownEndsWaits(t *testing.T) {
	done := make(chan struct{})
	p := newProxy("flaky", true, done)
	errc := make(chan error, 1)
	go func() {
		_, err := p.InspectTask(context.Background(), "x")
		errc <- err
	}()
	close(done)
	select {
	case err := <-errc:
		if !errors.Is(err, drivers.ErrPluginUnavailable) {
			t.Fatalf("err = %v, want ErrPluginUnavailable", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("a call waiting for the plugin did not end at shutdown")
	}
}
