package e2e

import (
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/drover-io/drover/api"
)

// agentStartWait bounds each wait of launchAgent for an agent to come up:
// generous, as the tests run in parallel with -race on a loaded 2-core
// machine. It is a bound on failure; the wait ends with the event.
const agentStartWait = 2 * time.Minute

// agentWait says what launchAgent waits for before it returns.
type agentWait int

const (
	waitNothing agentWait = 0
	// waitLeader: the agent's server knows its leader.
	waitLeader agentWait = 1 << iota
	// waitNode: a client node is ready in the agent's view.
	waitNode
)

// agentSpec says how launchAgent starts an agent. Its zero value (with
// dev set) is what startAgent starts.
type agentSpec struct {
	// name names the agent in messages and its config file ("agent" when
	// empty).
	name string
	// dev runs `agent -dev -bind 127.0.0.1 -http-port <free> -data-dir
	// <temp> -log-level debug`; config, if set, is merged into it.
	// Without dev, config is the agent's whole configuration and
	// httpPort must be its HTTP port.
	dev bool
	// config is the content of a file passed with -config.
	config string
	// configFile is that file's name (name+".hcl" when empty): Nomad's
	// harness writes JSON into a file without an extension.
	configFile string
	// httpPort is the HTTP port the config sets (without dev).
	httpPort int
	// dataDir is the data dir the config sets (without dev; a dev agent
	// gets a temp dir): when the test ends, after the agent's stop, the
	// shims, tasks and mounts it left there are removed (a non-dev agent
	// leaves its tasks running when it stops).
	dataDir string
	// args are more agent flags, after the ones above.
	args []string
	// env is more environment for the agent (DROVER_ADDR and NOMAD_ADDR
	// are always cleared).
	env []string
	// wait is what to wait for before launchAgent returns.
	wait agentWait
	// killable says the test may stop or kill the agent itself: at the
	// end it is stopped only if it still runs, and an early exit is not
	// an error.
	killable bool
	// cmdOpts change the command just before it starts.
	cmdOpts []func(*exec.Cmd)
}

// agent is a drover agent subprocess a test started: a dev agent from
// startAgent, any other from launchAgent, or one start of a
// persistentAgent (which starts it again on the same state).
type agent struct {
	name    string
	addr    string // the HTTP API, "http://127.0.0.1:<port>"
	dataDir string // its data dir, where the test chose it
	// output holds what every start of the process wrote.
	output *syncBuffer
	// cmd, exited and err are of the latest start: exited closes when
	// the process has exited, err is its exit status (read it after
	// exited closes).
	cmd    *exec.Cmd
	exited chan struct{}
	err    error
	starts int // how many times the process was started
}

// startAgent starts a dev agent on a free port with its own data directory,
// waits until it knows its leader and its client node is ready, and stops
// it with SIGINT when the test ends, failing the test if it does not exit
// or exited early. opts may change the agent's command before it starts.
func startAgent(t *testing.T, opts ...func(*exec.Cmd)) *agent {
	t.Helper()
	return launchAgent(t, agentSpec{dev: true, wait: waitLeader | waitNode, cmdOpts: opts})
}

// launchAgent starts the agent spec describes, registers its stop at the
// end of the test (see agentSpec.killable) and waits for what spec.wait
// says.
func launchAgent(t *testing.T, spec agentSpec) *agent {
	t.Helper()
	requireBinary(t)
	if spec.name == "" {
		spec.name = "agent"
	}
	args := []string{"agent"}
	a := &agent{name: spec.name, output: &syncBuffer{}}
	port := spec.httpPort
	if spec.dev {
		if port == 0 {
			port = freePort(t)
		}
		a.dataDir = t.TempDir()
		args = append(args, "-dev")
		if spec.config != "" {
			args = append(args, "-config", writeFile(t, configFileName(spec), spec.config))
		}
		args = append(args, "-bind", "127.0.0.1", "-http-port", strconv.Itoa(port),
			"-data-dir", a.dataDir, "-log-level", "debug")
	} else {
		if port == 0 {
			t.Fatalf("launchAgent %s: a configured agent needs the HTTP port its config sets", spec.name)
		}
		args = append(args, "-config", writeFile(t, configFileName(spec), spec.config))
		a.dataDir = spec.dataDir
	}
	a.addr = "http://127.0.0.1:" + strconv.Itoa(port)
	if a.dataDir != "" {
		// Cleanups run last-registered first: this one after the stop.
		t.Cleanup(func() { killLeftovers(t, a.dataDir) })
	}
	a.spawn(t, append(args, spec.args...), spec.env, spec.cmdOpts...)
	t.Cleanup(func() {
		if spec.killable && !a.running() {
			if t.Failed() {
				t.Logf("agent %s output:\n%s", a.name, a.output)
			}
			return
		}
		a.stop(t)
	})
	if spec.wait&waitLeader != 0 {
		a.waitLeader(t, agentStartWait)
	}
	if spec.wait&waitNode != 0 {
		a.waitNodeReady(t, a.client(t), "", agentStartWait)
	}
	return a
}

// configFileName is the name of spec's config file.
func configFileName(spec agentSpec) string {
	if spec.configFile != "" {
		return spec.configFile
	}
	return spec.name + ".hcl"
}

// spawn starts `drover <args>` (again), its output into a.output, with
// DROVER_ADDR and NOMAD_ADDR cleared and env added, and returns at once.
// Each start's output is headed by a marker line (see sinceLastStart).
func (a *agent) spawn(t *testing.T, args, env []string, opts ...func(*exec.Cmd)) {
	t.Helper()
	if a.running() {
		t.Fatalf("agent %s is already running", a.name)
	}
	if a.output == nil {
		a.output = &syncBuffer{}
	}
	a.starts++
	fmt.Fprintf(a.output, "=== e2e: start %d of agent %s\n", a.starts, a.name)
	a.cmd = exec.Command(droverBin, args...)
	a.cmd.Stdout, a.cmd.Stderr = a.output, a.output
	a.cmd.Env = append(append(os.Environ(), "DROVER_ADDR=", "NOMAD_ADDR="), env...)
	for _, opt := range opts {
		opt(a.cmd)
	}
	a.exited = make(chan struct{})
	a.err = nil
	if err := a.cmd.Start(); err != nil {
		t.Fatalf("start agent %s: %v", a.name, err)
	}
	cmd, exited := a.cmd, a.exited
	go func() {
		a.err = cmd.Wait()
		close(exited)
	}()
}

// running reports whether the agent process was started and has not exited.
func (a *agent) running() bool {
	if a.exited == nil {
		return false
	}
	select {
	case <-a.exited:
		return false
	default:
		return true
	}
}

// sinceLastStart returns the agent's output since its latest start.
func (a *agent) sinceLastStart() string {
	out := a.output.String()
	if i := strings.LastIndex(out, "=== e2e: start "); i >= 0 {
		return out[i:]
	}
	return out
}

// checkAlive fails the test at once if the agent exited.
func (a *agent) checkAlive(t *testing.T) {
	t.Helper()
	select {
	case <-a.exited:
		t.Fatalf("agent %s exited (%v); its output:\n%s", a.name, a.err, a.sinceLastStart())
	default:
	}
}

// waitLeader waits until the agent's server knows its leader.
func (a *agent) waitLeader(t *testing.T, timeout time.Duration) {
	t.Helper()
	c := a.client(t)
	waitFor(t, timeout, "agent "+a.name+" to know its leader", func() (bool, string) {
		a.checkAlive(t)
		leader, err := c.Status().Leader()
		if err != nil {
			return false, err.Error()
		}
		return leader != "", "no leader yet"
	})
}

// waitNodeReady waits until the node named node (any node when empty) is
// ready in the view of c, failing at once if the agent exits.
func (a *agent) waitNodeReady(t *testing.T, c *api.Client, node string, timeout time.Duration) {
	t.Helper()
	what := "a client node of agent " + a.name + " to be ready"
	if node != "" {
		what = "node " + node + " to be ready"
	}
	waitFor(t, timeout, what, func() (bool, string) {
		a.checkAlive(t)
		nodes, _, err := c.Nodes().List(nil)
		if err != nil {
			return false, err.Error()
		}
		for _, n := range nodes {
			if node == "" && n.Status == api.NodeStatusReady {
				return true, ""
			}
			if node != "" && n.Name == node {
				return n.Status == api.NodeStatusReady, "node status " + n.Status
			}
		}
		if node == "" {
			return false, fmt.Sprintf("%d nodes, none ready", len(nodes))
		}
		return false, fmt.Sprintf("no node named %q among %d", node, len(nodes))
	})
}

// stop sends SIGINT and fails the test if the agent does not exit cleanly
// in time, or had exited before.
func (a *agent) stop(t *testing.T) {
	t.Helper()
	select {
	case <-a.exited:
		if !t.Failed() {
			t.Errorf("agent %s exited before the test ended (%v); its output:\n%s", a.name, a.err, a.output)
		}
		return
	default:
	}
	a.interrupt(t)
	if t.Failed() {
		t.Logf("agent %s output (%d starts):\n%s", a.name, a.starts, a.output)
	}
}

// interrupt stops the agent with SIGINT (a non-dev agent leaves its tasks
// running) and fails the test unless it exits cleanly within 45s.
func (a *agent) interrupt(t *testing.T) {
	t.Helper()
	if err := a.cmd.Process.Signal(syscall.SIGINT); err != nil && !errors.Is(err, os.ErrProcessDone) {
		t.Errorf("interrupt agent %s: %v", a.name, err)
	}
	select {
	case <-a.exited:
		if a.err != nil {
			t.Errorf("agent %s exited with %v after SIGINT", a.name, a.err)
		}
	case <-time.After(45 * time.Second):
		_ = syscall.Kill(a.cmd.Process.Pid, syscall.SIGKILL)
		<-a.exited
		t.Errorf("agent %s did not exit within 45s of SIGINT", a.name)
	}
}

// client returns a drover API client for the agent.
func (a *agent) client(t *testing.T) *api.Client {
	t.Helper()
	c, err := api.NewClient(&api.Config{Address: a.addr, HTTPClient: &http.Client{Timeout: 30 * time.Second}})
	if err != nil {
		t.Fatal(err)
	}
	return c
}
