package shim

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/drover-io/drover/drivers/shared/isolation"
	"github.com/drover-io/drover/drivers/shared/testwait"
)

// envMode tells a re-executed test binary what to be: "shim" runs Main,
// "starter" plays an agent that starts a shim (see starterMain).
const envMode = "DROVER_SHIM_TEST_MODE"

func TestMain(m *testing.M) {
	// Isolated tasks start with this binary as the isolation init stage
	// (with an empty environment, so before the mode switch).
	if code, ok := isolation.RunIfInit(os.Args[1:]); ok {
		os.Exit(code)
	}
	switch os.Getenv(envMode) {
	case "shim":
		os.Exit(Main(os.Args[1:]))
	case "starter":
		os.Exit(starterMain())
	}
	// Shims started by the tests re-execute this binary.
	os.Setenv(envMode, "shim")
	// A -race binary sleeps a second at exit by default; the launcher of
	// every shim exits.
	os.Setenv("GORACE", "atexit_sleep_ms=0")
	goleak.VerifyTestMain(m)
}

// starterMain starts a shim for the spec in $SHIM_TEST_SPEC, writes its
// State to $SHIM_TEST_STATE and then blocks until killed, or returns when
// $SHIM_TEST_EXIT is set. With $SHIM_TEST_DIRTY_SIGNALS set it starts the
// shim with signals ignored and blocked (see dirtySignals).
func starterMain() int {
	b, err := os.ReadFile(os.Getenv("SHIM_TEST_SPEC"))
	if err != nil {
		return 10
	}
	var spec Spec
	if err := json.Unmarshal(b, &spec); err != nil {
		return 11
	}
	os.Setenv(envMode, "shim")
	exe, err := os.Executable()
	if err != nil {
		return 12
	}
	if os.Getenv("SHIM_TEST_DIRTY_SIGNALS") != "" && dirtySignals() != nil {
		return 15
	}
	h, err := Start(context.Background(), exe, nil, &spec)
	if err != nil {
		os.Stderr.WriteString(err.Error())
		return 13
	}
	b, _ = json.Marshal(h.State())
	if err := writeFileAtomic(os.Getenv("SHIM_TEST_STATE"), b, 0o600); err != nil {
		return 14
	}
	if os.Getenv("SHIM_TEST_EXIT") != "" {
		return 0
	}
	select {} // until killed
}

// testSpec is a spec running script with /bin/sh in a fresh directory.
func testSpec(t *testing.T, script string) *Spec {
	t.Helper()
	dir := t.TempDir()
	return &Spec{
		ID:         t.Name(),
		Command:    "/bin/sh",
		Args:       []string{"-c", script},
		Env:        []string{"PATH=/usr/bin:/bin"},
		Dir:        dir,
		StdoutPath: filepath.Join(dir, "logs", "task.stdout"),
		StderrPath: filepath.Join(dir, "logs", "task.stderr"),
		StateDir:   filepath.Join(dir, "state"),
	}
}

// startShim starts a shim for spec and makes sure it and its task are gone
// when the test ends.
func startShim(t *testing.T, spec *Spec) *Handle {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	h, err := Start(ctx, exe, nil, spec)
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	cleanupShim(t, h.State())
	return h
}

// cleanupShim kills the shim of st (its task follows by Pdeathsig) at the
// end of the test, and waits until it is gone so that the test's
// directories can be removed.
func cleanupShim(t *testing.T, st *State) {
	t.Cleanup(func() {
		if processAlive(st.ShimPID, st.ShimStartTicks, st.BootID) {
			_ = syscall.Kill(st.ShimPID, syscall.SIGKILL)
		}
		testwait.Exit(t, "shim to exit", st.ShimPID, func() bool { return processAlive(st.ShimPID, st.ShimStartTicks, st.BootID) })
		killOrphans(st.TaskPID, st.ShimPID)
	})
}

// pidGone reports whether pid is no longer running (absent or a zombie).
func pidGone(pid int) bool {
	st, err := readProcStat(pid)
	return err != nil || st.state == 'Z' || st.state == 'X'
}

// logText returns the contents of all rotated files of the base path p.
func logText(t *testing.T, p string) string {
	t.Helper()
	var sb strings.Builder
	for i := 0; ; i++ {
		b, err := os.ReadFile(p + "." + itoa(i))
		if err != nil {
			return sb.String()
		}
		sb.Write(b)
	}
}

func itoa(i int) string { return strconv.Itoa(i) }

// waitForLog waits until the log at base path p contains s.
func waitForLog(t *testing.T, p, s string) {
	t.Helper()
	testwait.Until(t, "log "+filepath.Base(p)+" to contain "+s, filepath.Dir(p), func() bool {
		return strings.Contains(logText(t, p), s)
	})
}

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	return ctx
}
