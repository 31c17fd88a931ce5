package e2e

import (
	"errors"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/drover-io/drover/api"
)

// atLogLevel runs the agent at level instead of startAgent's debug.
func atLogLevel(level string) func(*exec.Cmd) {
	return func(cmd *exec.Cmd) {
		for i, arg := range cmd.Args {
			if arg == "-log-level" && i+1 < len(cmd.Args) {
				cmd.Args[i+1] = level
			}
		}
	}
}

// withConfig adds a configuration file holding cfg to the agent's command.
func withConfig(t *testing.T, cfg string) func(*exec.Cmd) {
	path := writeFile(t, "agent.hcl", cfg)
	return func(cmd *exec.Cmd) { cmd.Args = append(cmd.Args, "-config", path) }
}

// drover monitor shows the debug lines of an agent that logs at info:
// the lines logged after it joined, at the level it asked for.
func TestMonitorShowsLinesAtItsLevel(t *testing.T) {
	t.Parallel()
	a := startAgent(t, atLogLevel("info"))
	out, errOut := &syncBuffer{}, &syncBuffer{}
	mon := exec.Command(droverBin, "monitor", "-log-level", "debug")
	mon.Env = append(os.Environ(), "DROVER_ADDR="+a.addr, "NOMAD_ADDR=")
	mon.Stdout, mon.Stderr = out, errOut
	if err := mon.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- mon.Wait() }()
	defer func() {
		_ = mon.Process.Signal(syscall.SIGINT)
		select {
		case err := <-exited:
			if err != nil {
				t.Errorf("drover monitor after Ctrl-C: %v; stderr %s", err, errOut)
			}
		case <-time.After(30 * time.Second):
			_ = mon.Process.Kill()
			t.Errorf("drover monitor did not stop on SIGINT")
		}
	}()

	// Each request is logged at debug once it is answered; the monitor
	// shows the ones made after it joined.
	waitFor(t, 60*time.Second, "drover monitor to show a debug line", func() (bool, string) {
		if _, err := a.client(t).Agent().Self(); err != nil {
			return false, err.Error()
		}
		return strings.Contains(out.String(), "[DEBUG] http: http request: method=GET path=/v1/agent/self"),
			"monitor output so far: " + out.String() + errOut.String()
	})
	if strings.Contains(a.output.String(), "path=/v1/agent/self") {
		t.Errorf("the agent logs at info, yet its own output holds debug lines:\n%s", a.output)
	}
}

// The profiles are served by a dev agent (enable_debug is on in dev
// mode) and refused when the configuration turns them off.
func TestPprofNeedsEnableDebug(t *testing.T) {
	t.Parallel()
	a := startAgent(t)
	b, err := a.client(t).Agent().Lookup("goroutine", api.PprofOptions{Debug: 1}, nil)
	if err != nil || !strings.Contains(string(b), "goroutine profile:") {
		t.Fatalf("goroutine profile of a dev agent: %v, %.200q", err, b)
	}

	off := startAgent(t, withConfig(t, "enable_debug = false\n"))
	_, err = off.client(t).Agent().Lookup("heap", api.PprofOptions{}, nil)
	var ue *api.UnexpectedResponseError
	if !errors.As(err, &ue) || ue.StatusCode != http.StatusForbidden || !strings.Contains(ue.Message, "enable_debug = true") {
		t.Fatalf("heap profile with enable_debug = false: %v", err)
	}
	if r := off.cli(t, "agent-info"); r.code != 0 || !strings.Contains(r.stdout, "runtime\n") || !strings.Contains(r.stdout, "  goroutines = ") {
		t.Errorf("agent-info:\n%s", r)
	}
	if r := off.cli(t, "server", "members"); r.code != 0 || !strings.Contains(r.stdout, "alive   true") {
		t.Errorf("server members:\n%s", r)
	}
}

// operator debug against a real agent: every part of the bundle, with
// the log lines of the capture's own requests in monitor.log.
func TestOperatorDebugBundle(t *testing.T) {
	t.Parallel()
	a := startAgent(t, atLogLevel("info"))
	out := t.TempDir()
	r := a.cli(t, "operator", "debug", "-duration", "5s", "-interval", "1s", "-log-level", "debug", "-output", out)
	if r.code != 0 {
		t.Fatalf("operator debug:\n%s", r)
	}
	for _, want := range []string{"Starting debugger", "Captured profiles: goroutine, heap", "Capturing interval 0000",
		"Capturing interval 0003", "Created debug directory: "} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("no %q in its progress:\n%s", want, r)
		}
	}
	bundles, err := filepath.Glob(filepath.Join(out, "drover-debug-*"))
	if err != nil || len(bundles) != 1 {
		t.Fatalf("bundles %v, %v", bundles, err)
	}
	files := map[string]string{
		"agent-self.json":                "\"Region\": \"global\"",
		"members.json":                   "\"Status\": \"alive\"",
		"goroutine-debug2.txt":           "goroutine ",
		"goroutine.prof":                 "\x1f\x8b",
		"heap.prof":                      "\x1f\x8b",
		"interval/0000/nodes.json":       "\"Status\": \"ready\"",
		"interval/0000/jobs.json":        "[",
		"interval/0000/allocations.json": "[",
		"interval/0003/evaluations.json": "[",
		"monitor.log":                    "[DEBUG] http: http request: method=GET path=/v1/nodes",
	}
	for name, want := range files {
		b, err := os.ReadFile(filepath.Join(bundles[0], name))
		if err != nil || !strings.Contains(string(b), want) {
			t.Errorf("%s: %v, %.300q", name, err, b)
		}
	}
	if _, err := os.Stat(filepath.Join(bundles[0], "errors.txt")); err == nil {
		b, _ := os.ReadFile(filepath.Join(bundles[0], "errors.txt"))
		t.Errorf("errors.txt: %s", b)
	}
}
