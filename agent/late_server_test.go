package agent

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/drover-io/drover/rpcapi"
	"github.com/drover-io/drover/structs"
)

// fakeLink answers NodeRegister and NodeGet.
func fakeLink() rpcapi.Conn {
	h := rpcapi.NewHandlers()
	rpcapi.Handle(h, rpcapi.NodeRegister, func(context.Context, *structs.NodeRegisterRequest) (*structs.NodeUpdateResponse, error) {
		return &structs.NodeUpdateResponse{HeartbeatTTL: time.Second}, nil
	})
	rpcapi.Handle(h, rpcapi.NodeGet, func(context.Context, *structs.NodeSpecificRequest) (*structs.SingleNodeResponse, error) {
		return &structs.SingleNodeResponse{Node: &structs.Node{ID: "n1"}}, nil
	})
	return h
}

func TestLateServer(t *testing.T) {
	tests := []struct {
		name    string
		set     func(l *lateServer)
		cancel  bool
		wantErr bool
	}{
		{name: "calls wait for the server", set: func(l *lateServer) { l.set(fakeLink(), nil) }},
		{name: "the server's error", set: func(l *lateServer) { l.set(nil, errors.New("no leader")) }, wantErr: true},
		{name: "first set wins", set: func(l *lateServer) { l.set(fakeLink(), nil); l.set(nil, errors.New("late")) }},
		{name: "the caller's context ends", cancel: true, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				l := newLateServer()
				ctx, cancel := context.WithCancel(context.Background())
				defer cancel()
				done := make(chan error, 2)
				go func() {
					_, err := rpcapi.NodeRegister.Call(ctx, l, &structs.NodeRegisterRequest{})
					done <- err
				}()
				go func() {
					_, err := rpcapi.NodeGet.Call(ctx, l, &structs.NodeSpecificRequest{})
					done <- err
				}()
				synctest.Wait()
				select {
				case err := <-done:
					t.Fatalf("a call returned before the server was set: %v", err)
				default:
				}
				if tt.cancel {
					cancel()
				} else {
					tt.set(l)
				}
				for range 2 {
					// In the bubble, a call that still waits is a deadlock
					// synctest reports.
					err := <-done
					if (err != nil) != tt.wantErr {
						t.Errorf("err = %v, want error %v", err, tt.wantErr)
					}
					if err != nil && structs.KindOf(err) != structs.KindUnavailable {
						t.Errorf("err kind = %v, want unavailable", structs.KindOf(err))
					}
				}
			})
		})
	}
}
