package shim

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestParseProcStat(t *testing.T) {
	rest := " S 1 100 100 0 -1 4194560 10 0 0 0 7 3 2 1 20 0 1 0 12345 1000 250 18446744073709551615"
	tests := []struct {
		name string
		line string
		ok   bool
	}{
		{"plain", "42 (sleep)" + rest, true},
		{"spaces and parens in the name", "42 (a) b (c)" + rest, true},
		{"truncated", "42 (sleep) S 1 2", false},
		{"garbage", "nonsense", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st, err := parseProcStat([]byte(tt.line))
			if (err == nil) != tt.ok {
				t.Fatalf("err = %v, want ok=%v", err, tt.ok)
			}
			if !tt.ok {
				return
			}
			want := procStat{state: 'S', ppid: 1, pgrp: 100, session: 100, utime: 7, stime: 3, cutime: 2, cstime: 1, startTicks: 12345, rssPages: 250}
			if st != want {
				t.Errorf("got %+v, want %+v", st, want)
			}
		})
	}
}

func TestSocketPathFor(t *testing.T) {
	short := "/var/lib/drover/shims/abc"
	if got := SocketPathFor(short); got != short+"/shim.sock" {
		t.Errorf("SocketPathFor(%q) = %q", short, got)
	}
	long := "/var/lib/drover/client/alloc/" + strings.Repeat("0123456789", 10) + "/task"
	got := SocketPathFor(long)
	if len(got) > maxSocketPath || filepath.Dir(got) != filepath.Clean(os.TempDir()) {
		t.Errorf("SocketPathFor(long) = %q (%d bytes)", got, len(got))
	}
	if got != SocketPathFor(long) || got == SocketPathFor(long+"2") {
		t.Error("SocketPathFor must be stable per dir and differ between dirs")
	}
}

func TestSpecValidationDefaults(t *testing.T) {
	s, err := (&Spec{Command: "x", StdoutPath: "o", StderrPath: "e", StateDir: "/tmp/s"}).validate()
	if err != nil {
		t.Fatal(err)
	}
	if s.MaxFiles != DefaultMaxFiles || s.MaxFileSizeMB != DefaultMaxFileSizeMB || s.SocketPath != "/tmp/s/shim.sock" {
		t.Errorf("defaults not applied: %+v", s)
	}
	if _, err := (&Spec{}).validate(); err == nil || !strings.Contains(err.Error(), "command is empty") {
		t.Errorf("empty spec: %v", err)
	}
}

func TestStopSignal(t *testing.T) {
	cases := []struct {
		signal, kill string
		want         string
	}{
		{"", "", "SIGINT"},
		{"", "SIGTERM", "SIGTERM"},
		{"SIGHUP", "SIGTERM", "SIGHUP"},
	}
	for _, tc := range cases {
		if got := StopSignal(tc.signal, tc.kill); got != tc.want {
			t.Errorf("StopSignal(%q, %q) = %q; want %q", tc.signal, tc.kill, got, tc.want)
		}
	}
}
