package server

import (
	"crypto/tls"
	"io"
	"log/slog"
	"net"
	"testing"
	"time"

	"github.com/drover-io/drover/tlsutil"
)

// TestRPCMuxTLSRouting: with TLS the mux hands the HTTP listener the
// decrypted stream of a TLS connection (its first byte included), refuses
// plain text, and accepts plain text too in upgrade mode.
func TestRPCMuxTLSRouting(t *testing.T) {
	tt := newTestTLS(t)
	srv := tt.configurator(t, tlsutil.KindServer, "server")
	client := tt.configurator(t, tlsutil.KindClient, "client")
	for _, tc := range []struct {
		name      string
		plaintext bool // upgrade mode
		useTLS    bool
		wantHTTP  bool
	}{
		{"TLS", false, true, true},
		{"plain text refused", false, false, false},
		{"plain text in upgrade mode", true, false, true},
		{"TLS in upgrade mode", true, true, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			m := newRPCMux(ln, &RPCTLS{Server: srv.RPCServer(), Client: srv.RPCClient(), AllowPlaintext: tc.plaintext}, slog.New(slog.DiscardHandler))
			m.start()
			defer m.close()
			got := make(chan []byte, 1)
			go func() {
				conn, err := m.http.Accept()
				if err != nil {
					got <- nil
					return
				}
				defer conn.Close()
				b := make([]byte, 5)
				_, _ = io.ReadFull(conn, b)
				got <- b
			}()
			var conn net.Conn
			if tc.useTLS {
				conn, err = tls.Dial("tcp", ln.Addr().String(), client.RPCClient())
			} else {
				conn, err = net.Dial("tcp", ln.Addr().String())
			}
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			if _, err := conn.Write([]byte("POST ")); err != nil {
				t.Fatal(err)
			}
			_ = conn.SetReadDeadline(time.Now().Add(30 * time.Second))
			_, rerr := conn.Read(make([]byte, 1)) // the mux closes a refused connection
			if tc.wantHTTP {
				if b := <-got; string(b) != "POST " {
					t.Fatalf("the HTTP listener read %q, want %q", b, "POST ")
				}
				return
			}
			if rerr == nil {
				t.Fatal("a refused connection stayed open")
			}
			m.close()
			if b := <-got; b != nil {
				t.Fatalf("a refused connection reached the HTTP listener: %q", b)
			}
		})
	}
}
