package tlsutil

import (
	"bufio"
	"context"
	"crypto/tls"
	"net"
	"sync"
	"testing"
)

// BenchmarkRPCHandshake measures one mutual TLS connection between agents
// (dial, handshake, one line back) over loopback: "full" with a fresh
// session cache each time, "resumed" with the agents' shared cache.
//
//	go test -run '^$' -bench RPCHandshake -benchmem ./tlsutil
func BenchmarkRPCHandshake(b *testing.B) {
	t := &testing.T{}
	set := newCertSet(t)
	server := set.configurator(t, KindServer, nil, nil)
	client := set.configurator(t, KindClient, nil, nil)
	if t.Failed() {
		b.Fatal("setup failed")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			tc := tls.Server(conn, server.RPCServer())
			if tc.Handshake() == nil {
				_, _ = tc.Write([]byte("ok\n"))
			}
			_ = tc.Close()
		}
	}()
	defer func() {
		_ = ln.Close()
		wg.Wait()
	}()
	for _, mode := range []string{"full", "resumed"} {
		b.Run(mode, func(b *testing.B) {
			cfg := client.RPCClient()
			resumed := 0
			for b.Loop() {
				if mode == "full" {
					cfg.ClientSessionCache = nil
				}
				conn, err := DialContext(&net.Dialer{}, cfg)(context.Background(), "tcp", ln.Addr().String())
				if err != nil {
					b.Fatal(err)
				}
				if _, err := bufio.NewReader(conn).ReadString('\n'); err != nil {
					b.Fatal(err)
				}
				if conn.(*tls.Conn).ConnectionState().DidResume {
					resumed++
				}
				_ = conn.Close()
			}
			b.ReportMetric(float64(resumed)/float64(b.N), "resumed/op")
		})
	}
}
