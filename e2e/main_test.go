package e2e

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// droverBin is the binary under test, built once by TestMain; buildErr says
// why it could not be built.
var (
	droverBin string
	buildErr  error
)

// defaultParallel is how many tests of this package run at once when
// `go test` is not given -parallel: they mostly wait on agents (and on
// tasks, elections, heartbeats), so more than the GOMAXPROCS default of
// -parallel, which is 2 on a 2-core machine. Each test holds one to five
// agents built with -race (about 100-200 MB each).
const defaultParallel = 8

func TestMain(m *testing.M) {
	flag.Parse()
	setDefaultParallel()
	dir, err := os.MkdirTemp("", "drover-e2e-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e: temp dir:", err)
		os.Exit(1)
	}
	droverBin, buildErr = buildDrover(dir)
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// setDefaultParallel sets -test.parallel to defaultParallel unless the
// command line set it.
func setDefaultParallel() {
	set := false
	flag.Visit(func(f *flag.Flag) { set = set || f.Name == "test.parallel" })
	if !set {
		if err := flag.Set("test.parallel", strconv.Itoa(defaultParallel)); err != nil {
			fmt.Fprintln(os.Stderr, "e2e: set -parallel:", err)
		}
	}
}

// buildDrover builds ./cmd/drover and ./cmd/drover-shim (which the agent
// runs task shims with, as `make build` installs it) into dir in one `go
// build` (their packages compile in parallel), with -race when the tests
// run with it (set DROVER_E2E_NORACE=1 to build without), and returns the
// drover binary's path.
func buildDrover(dir string) (string, error) {
	args := []string{"build", "-o", dir + string(filepath.Separator)}
	if raceEnabled && os.Getenv("DROVER_E2E_NORACE") == "" {
		args = append(args, "-race")
	}
	args = append(args, "github.com/drover-io/drover/cmd/drover", "github.com/drover-io/drover/cmd/drover-shim")
	cmd := exec.Command("go", args...)
	cmd.Dir = ".."
	out, err := cmd.CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("go %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return filepath.Join(dir, "drover"), nil
}

// requireBinary skips the test when the binary could not be built.
func requireBinary(t *testing.T) {
	t.Helper()
	if buildErr != nil {
		t.Skipf("the drover binary could not be built, so there is nothing to test end to end: %v", buildErr)
	}
}

// syncBuffer is a bytes.Buffer safe for the writes of a subprocess's
// copier goroutines and the reads of the test.
type syncBuffer struct {
	mu  sync.Mutex // guards the field below
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

// cliResult is the outcome of one CLI run.
type cliResult struct {
	code           int
	stdout, stderr string
}

func (r cliResult) String() string {
	return fmt.Sprintf("exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
}

// cli runs the drover CLI against the agent.
func (a *agent) cli(t *testing.T, args ...string) cliResult {
	t.Helper()
	return a.cliEnv(t, nil, args...)
}

// cliEnv runs the drover CLI against the agent with env added to its
// environment (a parallel test cannot use t.Setenv).
func (a *agent) cliEnv(t *testing.T, env []string, args ...string) cliResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, droverBin, args...)
	cmd.Env = append(append(os.Environ(), "DROVER_ADDR="+a.addr, "NOMAD_ADDR="), env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("run drover %v: %v", args, err)
	}
	return cliResult{code, stdout.String(), stderr.String()}
}

// Test ports come from testPortMin to testPortMax: below the kernel's
// ephemeral range (32768-60999 by default), where outgoing connections
// take their local ports, and below the agents' dynamic port range for
// tasks (20000-32000). A port freePort found free then stays free until
// the agent binds it, unless another program on the host picks ports from
// this range too.
const (
	testPortMin = 10000
	testPortMax = 19999
)

// handedOut is the set of ports freePort gave this test process: tests run
// in parallel, and each port goes to one of them only. It is the package's
// one piece of shared state, guarded by its mutex.
var handedOut = struct {
	mu    sync.Mutex
	ports map[int]bool
}{ports: map[int]bool{}}

// freePort returns a port of 127.0.0.1, free for TCP and UDP a moment ago,
// that no other test of this process got (see testPortMin).
func freePort(t *testing.T) int {
	t.Helper()
	return freePorts(t, 1)
}

// freePorts returns the first of n consecutive ports that freePort would
// each return (a client's dynamic port range).
func freePorts(t *testing.T, n int) int {
	t.Helper()
	handedOut.mu.Lock()
	defer handedOut.mu.Unlock()
	span := testPortMax - testPortMin + 2 - n
	start := rand.IntN(span)
next:
	for i := range span {
		first := testPortMin + (start+i)%span
		for port := first; port < first+n; port++ {
			if handedOut.ports[port] || !portFree(port) {
				continue next
			}
		}
		for port := first; port < first+n; port++ {
			handedOut.ports[port] = true
		}
		return first
	}
	t.Fatalf("no %d free consecutive ports left in %d-%d", n, testPortMin, testPortMax)
	return 0
}

// portFree reports whether port can be bound on 127.0.0.1 for TCP and UDP
// (a server's gossip uses both).
func portFree(port int) bool {
	addr := "127.0.0.1:" + strconv.Itoa(port)
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return false
	}
	defer l.Close()
	pc, err := net.ListenPacket("udp", addr)
	if err != nil {
		return false
	}
	return pc.Close() == nil
}

// waitFor polls cond until it reports true, failing the test after timeout
// with cond's last explanation.
func waitFor(t *testing.T, timeout time.Duration, what string, cond func() (bool, string)) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		ok, why := cond()
		if ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s: %s", timeout, what, why)
		}
		<-tick.C
	}
}

// writeFile writes content to name in a fresh temp dir and returns its path.
func writeFile(t *testing.T, name, content string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}
