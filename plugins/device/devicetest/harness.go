package devicetest

import (
	"context"
	"net"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/test/bufconn"

	"github.com/drover-io/drover/plugins/device"
	"github.com/drover-io/drover/plugins/device/grpcdevice"
	"github.com/drover-io/drover/plugins/device/proto"
)

// Serve serves impl over gRPC on an in-memory listener and returns a client
// of it. stop ends the server as a plugin process's death would (in-flight
// calls fail with device.ErrPluginUnavailable); it is idempotent, and runs at
// the test's cleanup.
func Serve(t testing.TB, impl device.DevicePlugin) (c *grpcdevice.Client, stop func()) {
	t.Helper()
	lis := bufconn.Listen(1 << 20)
	srv := grpc.NewServer()
	proto.RegisterDeviceServer(srv, grpcdevice.NewServer(impl))
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
	return grpcdevice.NewClient(conn), stop
}
