package agent

import (
	"encoding/json"
	"errors"
	"log/syslog"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestNewLoggerJSONAndLocation(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Logging.JSON, cfg.Logging.IncludeLocation = true, true
	var out strings.Builder
	logger, sinks, err := newLogger(cfg, &out, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer sinks.Close()
	logger.Info("hello", "k", "v")
	var line map[string]any
	if err := json.Unmarshal([]byte(out.String()), &line); err != nil {
		t.Fatalf("not a JSON line: %q: %v", out.String(), err)
	}
	if line["msg"] != "hello" || line["k"] != "v" || line["source"] == nil {
		t.Errorf("line = %v", line)
	}
}

func TestNewLoggerFile(t *testing.T) {
	dir := t.TempDir()
	cfg := DefaultConfig()
	cfg.Logging.File = dir + "/" // a directory: drover.log in it
	var out strings.Builder
	logger, sinks, err := newLogger(cfg, &out, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	logger.Warn("to both")
	if err := sinks.Close(); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(dir, DefaultLogFileName))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), "to both") || !strings.Contains(out.String(), "to both") {
		t.Errorf("file %q, stderr %q", b, out.String())
	}
	cfg.Logging.File = filepath.Join(dir, "blocker", "x.log")
	writeFile(t, filepath.Join(dir, "blocker"), "a file, not a directory")
	if _, _, err := newLogger(cfg, &out, nil, nil); err == nil || !strings.Contains(err.Error(), "log_file") {
		t.Errorf("unusable log file: error %v", err)
	}
}

// rotatedFiles lists the rotated files of path ("<stem>-<nanos><ext>").
func rotatedFiles(t *testing.T, path string) []string {
	t.Helper()
	ext := filepath.Ext(path)
	m, err := filepath.Glob(strings.TrimSuffix(path, ext) + "-*" + ext)
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(m)
	return m
}

func TestRotatingFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "agent.log")
	now := time.Unix(1_700_000_000, 0)
	clock := func() time.Time { return now }
	f, err := openLogFile(LoggingConfig{File: path, RotateBytes: 10, RotateDuration: time.Hour, RotateMaxFiles: 2}, clock)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	write := func(s string) {
		t.Helper()
		if _, err := f.Write([]byte(s)); err != nil {
			t.Fatal(err)
		}
	}
	write("12345678\n") // 9 bytes
	if got := rotatedFiles(t, path); len(got) != 0 {
		t.Fatalf("rotated before the limit: %v", got)
	}
	now = now.Add(time.Second)
	write("abc\n") // would make 13 > 10: rotate first
	if got := rotatedFiles(t, path); len(got) != 1 {
		t.Fatalf("rotated files = %v, want 1", got)
	}
	now = now.Add(time.Hour) // by age
	write("d\n")
	now = now.Add(time.Hour)
	write("e\n")
	got := rotatedFiles(t, path)
	if len(got) != 2 {
		t.Fatalf("rotated files = %v, want the 2 newest kept", got)
	}
	if b, _ := os.ReadFile(got[1]); string(b) != "d\n" {
		t.Errorf("newest rotated file holds %q, want %q", b, "d\n")
	}
	if b, _ := os.ReadFile(path); string(b) != "e\n" {
		t.Errorf("current file holds %q", b)
	}
	// A file that is not one of ours is never pruned.
	writeFile(t, filepath.Join(dir, "agent-notes.log"), "keep")
	now = now.Add(time.Hour)
	write("f\n")
	if _, err := os.Stat(filepath.Join(dir, "agent-notes.log")); err != nil {
		t.Errorf("pruned a foreign file: %v", err)
	}
}

func TestNewLoggerSyslog(t *testing.T) {
	sock := filepath.Join(t.TempDir(), "log.sock")
	conn, err := net.ListenUnixgram("unixgram", &net.UnixAddr{Name: sock, Net: "unixgram"})
	if err != nil {
		t.Skipf("no unix datagram sockets here: %v", err)
	}
	defer conn.Close()
	cfg := DefaultConfig()
	cfg.Logging.EnableSyslog, cfg.Logging.SyslogFacility = true, "local3"
	dial := func(p syslog.Priority, tag string) (*syslog.Writer, error) {
		return syslog.Dial("unixgram", sock, p, tag)
	}
	var out strings.Builder
	logger, sinks, err := newLogger(cfg, &out, dial, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer sinks.Close()
	logger.With("alloc_id", "a1").Warn("disk is filling up")
	buf := make([]byte, 4096)
	if err := conn.SetReadDeadline(time.Now().Add(30 * time.Second)); err != nil {
		t.Fatal(err)
	}
	n, err := conn.Read(buf)
	if err != nil {
		t.Fatal(err)
	}
	msg := string(buf[:n])
	// LOCAL3 (19) * 8 + warning (4) = 156.
	if !strings.HasPrefix(msg, "<156>") || !strings.Contains(msg, "drover") || !strings.Contains(msg, "disk is filling up") || !strings.Contains(msg, "alloc_id=a1") {
		t.Errorf("syslog message = %q", msg)
	}
	if strings.Contains(msg, "time=") {
		t.Errorf("syslog message carries its own time: %q", msg)
	}
	if !strings.Contains(out.String(), "disk is filling up") {
		t.Error("stderr lost the line")
	}
}

func TestNewLoggerSyslogUnavailable(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Logging.EnableSyslog = true
	dial := func(syslog.Priority, string) (*syslog.Writer, error) {
		return nil, errors.New("dial unix /dev/log: no such file")
	}
	_, _, err := newLogger(cfg, &strings.Builder{}, dial, nil)
	if err == nil || !strings.Contains(err.Error(), "enable_syslog") || !strings.Contains(err.Error(), "enable_syslog = false") {
		t.Errorf("error = %v", err)
	}
	cfg.Logging.SyslogFacility = "LOCAL9"
	if err := cfg.Validate(); err == nil || !strings.Contains(err.Error(), `syslog_facility = "LOCAL9"`) {
		t.Errorf("bad facility: %v", err)
	}
}
