package allocrunner

import (
	"context"
	"crypto/tls"
	"net"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/drover-io/drover/structs"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
)

// startHealthServer serves gRPC's standard health service on a loopback
// port (over TLS with tlsCfg when not nil), with "app.v1.Api" SERVING and
// "app.v1.Down" NOT_SERVING; it returns the port.
func startHealthServer(t *testing.T, tlsCfg *tls.Config) int {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var opts []grpc.ServerOption
	if tlsCfg != nil {
		opts = append(opts, grpc.Creds(credentials.NewTLS(tlsCfg)))
	}
	srv := grpc.NewServer(opts...)
	hs := health.NewServer()
	hs.SetServingStatus("app.v1.Api", healthpb.HealthCheckResponse_SERVING)
	hs.SetServingStatus("app.v1.Down", healthpb.HealthCheckResponse_NOT_SERVING)
	healthpb.RegisterHealthServer(srv, hs)
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = srv.Serve(lis)
	}()
	t.Cleanup(func() {
		srv.Stop()
		<-done
	})
	return lis.Addr().(*net.TCPAddr).Port
}

func TestProbeGRPC(t *testing.T) {
	// httptest's certificate (for example.com and 127.0.0.1), signed by
	// a CA the probe does not trust.
	ts := httptest.NewUnstartedServer(nil)
	ts.StartTLS()
	serverTLS := &tls.Config{Certificates: ts.TLS.Certificates}
	ts.Close()

	plain := startHealthServer(t, nil)
	secure := startHealthServer(t, serverTLS)
	tests := []struct {
		name    string
		port    int
		check   structs.ServiceCheck
		wantOK  bool
		wantOut string
	}{
		{"serving service", plain, structs.ServiceCheck{GRPCService: "app.v1.Api"}, true, `"app.v1.Api": SERVING`},
		{"whole server", plain, structs.ServiceCheck{}, true, `"": SERVING`},
		{"service interpolated", plain, structs.ServiceCheck{GRPCService: "app.v1.${SVC}"}, true, `"app.v1.Api": SERVING`},
		{"not serving", plain, structs.ServiceCheck{GRPCService: "app.v1.Down"}, false, "NOT_SERVING"},
		{"unknown service", plain, structs.ServiceCheck{GRPCService: "nope"}, false, "NotFound"},
		{"tls, certificate not trusted", secure, structs.ServiceCheck{GRPCService: "app.v1.Api", GRPCUseTLS: true}, false, "certificate"},
		{"tls, skip verify", secure, structs.ServiceCheck{GRPCService: "app.v1.Api", GRPCUseTLS: true, TLSSkipVerify: true}, true, "SERVING"},
		{"plain to a tls server", secure, structs.ServiceCheck{GRPCService: "app.v1.Api"}, false, "grpc health check"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ch := tt.check
			ch.Type = structs.ServiceCheckGRPC
			// Every probe here answers or fails at once (gRPC fails
			// fast on a refused handshake): the timeout is not under
			// test. The minimum (1s) is shorter than a TLS handshake
			// under -race on a loaded machine.
			ch.Timeout = time.Minute
			res := probe(context.Background(), &checkTarget{
				check: &ch, service: "web", addr: "127.0.0.1", port: tt.port,
				env: map[string]string{"SVC": "Api"},
			}, nil)
			if res.ok != tt.wantOK || !strings.Contains(res.output, tt.wantOut) {
				t.Fatalf("probe = ok %v, output %q; want ok %v, output containing %q", res.ok, res.output, tt.wantOK, tt.wantOut)
			}
		})
	}
}

func TestCheckTargetSame(t *testing.T) {
	base := func() *checkTarget {
		return &checkTarget{check: &structs.ServiceCheck{Name: "c", Type: structs.ServiceCheckHTTP, Path: "/health", Interval: 10e9},
			service: "web", addr: "127.0.0.1", port: 8080, task: "web"}
	}
	tests := []struct {
		name   string
		change func(*checkTarget)
		want   bool
	}{
		{"unchanged", func(*checkTarget) {}, true},
		{"port", func(c *checkTarget) { c.port = 8081 }, false},
		{"address", func(c *checkTarget) { c.addr = "10.0.0.1" }, false},
		{"path", func(c *checkTarget) { c.check.Path = "/ready" }, false},
		{"interval", func(c *checkTarget) { c.check.Interval = 5e9 }, false},
		{"service name", func(c *checkTarget) { c.service = "api" }, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := base()
			tt.change(o)
			if got := base().same(o); got != tt.want {
				t.Errorf("same = %v, want %v", got, tt.want)
			}
		})
	}
}
