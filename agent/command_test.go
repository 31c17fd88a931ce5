package agent

import (
	"bytes"
	"net/http"
	"os"
	"strings"
	"sync"
	"testing"
	"time"
)

// syncBuffer is a bytes.Buffer safe for a writer and a reader in two
// goroutines.
type syncBuffer struct {
	mu  sync.Mutex // guards buf
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func TestRunCommandArguments(t *testing.T) {
	tests := []struct {
		name       string
		args       []string
		wantCode   int
		wantStdout []string
		wantStderr []string
	}{
		{
			name: "help", args: []string{"-h"}, wantCode: 0,
			wantStdout: []string{"Usage: drover agent [options]", "-dev ", "-bind=<addr>", "127.0.0.1", "-http-port=<port>", "4646", "-data-dir=<path>", "-log-level=<level>", "Default: info", "-region=<region>", "global", "-dc=<datacenter>", "Default: dc1", "-node=<name>",
				"client.network_interface", "Server options:", "Client options:", "Consul options"},
		},
		{name: "neither server nor client", args: []string{"-data-dir", "/tmp/x"}, wantCode: 1, wantStderr: []string{"must run a server, a client or both"}},
		{name: "no data dir", args: []string{"-server"}, wantCode: 1, wantStderr: []string{"data_dir is required unless in -dev mode"}},
		{name: "bootstrap expect in dev mode", args: []string{"-dev", "-bootstrap-expect", "3"}, wantCode: 1, wantStderr: []string{"bootstrap_expect = 3", "-dev runs one server"}},
		{name: "client without servers", args: []string{"-client", "-data-dir", "/tmp/x"}, wantCode: 1, wantStderr: []string{"needs the servers' addresses"}},
		{name: "missing config", args: []string{"-dev", "-config", "/nonexistent/agent.hcl"}, wantCode: 1, wantStderr: []string{"/nonexistent/agent.hcl"}},
		{name: "bad flag", args: []string{"-dev", "-bogus"}, wantCode: 1, wantStderr: []string{"flag provided but not defined: -bogus"}},
		{name: "bad log level", args: []string{"-dev", "-log-level", "loud"}, wantCode: 1, wantStderr: []string{`-log-level "loud" is invalid`}},
		{name: "bad port", args: []string{"-dev", "-http-port", "70000"}, wantCode: 1, wantStderr: []string{"-http-port 70000 is out of range"}},
		{name: "stray argument", args: []string{"-dev", "extra"}, wantCode: 1, wantStderr: []string{`unexpected arguments ["extra"]`}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := runCommand(tc.args, &stdout, &stderr, nil, nil)
			if code != tc.wantCode {
				t.Errorf("exit code = %d, want %d; stderr %q", code, tc.wantCode, stderr.String())
			}
			for _, want := range tc.wantStdout {
				if !strings.Contains(stdout.String(), want) {
					t.Errorf("stdout lacks %q:\n%s", want, stdout.String())
				}
			}
			for _, want := range tc.wantStderr {
				if !strings.Contains(stderr.String(), want) {
					t.Errorf("stderr lacks %q:\n%s", want, stderr.String())
				}
			}
		})
	}
}

func TestRunCommandDevUntilSignal(t *testing.T) {
	var stdout, stderr syncBuffer
	signals := make(chan os.Signal, 1)
	started := make(chan *Agent, 1)
	done := make(chan int, 1)
	go func() {
		done <- runCommand([]string{"-dev", "-http-port", "0", "-node", "cmd-node", "-log-level", "debug"}, &stdout, &stderr, signals, started)
	}()
	var a *Agent
	select {
	case a = <-started:
	case code := <-done:
		t.Fatalf("agent exited with %d: %s", code, stderr.String())
	case <-time.After(30 * time.Second):
		t.Fatal("agent did not start")
	}
	out := stdout.String()
	for _, want := range []string{"http://" + a.HTTPAddr(), "Version: " + Version, "Server: true", "Client: true", "Node ID: " + a.NodeID(), "drover agent started!"} {
		if !strings.Contains(out, want) {
			t.Errorf("banner lacks %q:\n%s", want, out)
		}
	}
	hc := &http.Client{Transport: &http.Transport{}}
	resp, err := hc.Get("http://" + a.HTTPAddr() + "/v1/agent/health")
	if err != nil {
		t.Fatalf("health: %v", err)
	}
	resp.Body.Close()
	hc.CloseIdleConnections()

	signals <- os.Interrupt
	select {
	case code := <-done:
		if code != 0 {
			t.Errorf("exit code = %d; stderr %s", code, stderr.String())
		}
	case <-time.After(30 * time.Second):
		t.Fatal("agent did not stop after the signal")
	}
	if out := stdout.String(); !strings.Contains(out, "==> Caught signal: interrupt") || !strings.Contains(out, "Gracefully shutting down") {
		t.Errorf("stdout lacks the shutdown messages:\n%s", out)
	}
	if !strings.Contains(stderr.String(), "level=") {
		t.Errorf("stderr has no slog text logs:\n%s", stderr.String())
	}
}
