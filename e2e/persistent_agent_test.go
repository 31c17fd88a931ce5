package e2e

import (
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/drover-io/drover/api"
)

// persistentRole says what a persistent agent runs.
type persistentRole int

const (
	roleCombined persistentRole = iota // server and client in one process
	roleServer                         // server only
	roleClient                         // client only, talking to servers
)

// persistentAgent is a production (non -dev) agent started as
// `drover agent -config <file>`, keeping its raft log and client state in
// its data dir, so that it can be killed and started again on the same
// state. It runs in a process group of its own: SIGKILL to its pid alone
// is what systemd's KillMode=process does, and the task shims (in sessions
// of their own) must survive it.
type persistentAgent struct {
	name       string
	role       persistentRole
	dataDir    string
	configPath string
	httpPort   int
	rpcPort    int
	addr       string // the HTTP API, "http://127.0.0.1:<port>"
	// args are more flags for the next start (-recover).
	args []string

	// Set by start, read after exited closes.
	cmd    *exec.Cmd
	output *syncBuffer
	exited chan struct{}
	err    error
	starts int // how many times the process was started
}

// agentConfigHCL is the agent's config file. servers are the RPC
// addresses a client-only agent registers with.
func agentConfigHCL(role persistentRole, name, dataDir string, httpPort, rpcPort int, servers []string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "name      = %q\n", name)
	fmt.Fprintf(&b, "data_dir  = %q\n", dataDir)
	fmt.Fprintf(&b, "bind_addr = \"127.0.0.1\"\n")
	fmt.Fprintf(&b, "log_level = \"DEBUG\"\n\n")
	// serf = 0: a server gossips on a free port (the tests never use it).
	fmt.Fprintf(&b, "ports {\n  http = %d\n  rpc  = %d\n  serf = 0\n}\n\n", httpPort, rpcPort)
	if role != roleClient {
		b.WriteString("server {\n  enabled          = true\n  bootstrap_expect = 1\n}\n\n")
	}
	if role != roleServer {
		b.WriteString("client {\n  enabled = true\n")
		if len(servers) > 0 {
			quoted := make([]string, len(servers))
			for i, s := range servers {
				quoted[i] = strconv.Quote(s)
			}
			fmt.Fprintf(&b, "  servers = [%s]\n", strings.Join(quoted, ", "))
		}
		b.WriteString("}\n\n")
		b.WriteString("plugin \"raw_exec\" {\n  config {\n    enabled = true\n  }\n}\n")
	}
	return b.String()
}

// newPersistentAgent writes the config of an agent with a fresh data dir
// and free ports, and registers the test's cleanup: stop the agent (if it
// runs) and SIGKILL whatever shim or task it leaves behind. It does not
// start the agent.
func newPersistentAgent(t *testing.T, name string, role persistentRole, servers ...string) *persistentAgent {
	t.Helper()
	requirePersistentAgent(t)
	a := &persistentAgent{
		name:     name,
		role:     role,
		dataDir:  t.TempDir(),
		httpPort: freePort(t),
		rpcPort:  freePort(t),
	}
	a.addr = "http://127.0.0.1:" + strconv.Itoa(a.httpPort)
	a.configPath = filepath.Join(t.TempDir(), name+".hcl")
	cfg := agentConfigHCL(role, name, a.dataDir, a.httpPort, a.rpcPort, servers)
	if err := os.WriteFile(a.configPath, []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	// Cleanups run last-registered first: the leftover sweep, registered
	// first, runs after the agent's stop.
	t.Cleanup(func() { killLeftovers(t, a.dataDir) })
	t.Cleanup(func() {
		if a.running() {
			a.interrupt(t)
		}
		if t.Failed() && a.output != nil {
			t.Logf("agent %s output (%d starts):\n%s", a.name, a.starts, a.output)
		}
	})
	return a
}

// rpcAddr is the agent's RPC address, for a client's servers list.
func (a *persistentAgent) rpcAddr() string { return "127.0.0.1:" + strconv.Itoa(a.rpcPort) }

// running reports whether the agent process was started and has not exited.
func (a *persistentAgent) running() bool {
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

// start starts the agent process (again) on the same config and data dir
// and returns at once; see waitReady. The output of every start goes to
// one buffer, each start headed by a marker line.
func (a *persistentAgent) start(t *testing.T) {
	t.Helper()
	if a.running() {
		t.Fatalf("agent %s is already running", a.name)
	}
	if a.output == nil {
		a.output = &syncBuffer{}
	}
	a.starts++
	fmt.Fprintf(a.output, "=== e2e: start %d of agent %s\n", a.starts, a.name)
	a.cmd = exec.Command(droverBin, append([]string{"agent", "-config", a.configPath}, a.args...)...)
	a.cmd.Stdout = a.output
	a.cmd.Stderr = a.output
	a.cmd.Env = append(os.Environ(), "DROVER_ADDR=", "NOMAD_ADDR=")
	a.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
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

// sinceLastStart returns the agent's output since its latest start.
func (a *persistentAgent) sinceLastStart() string {
	out := a.output.String()
	if i := strings.LastIndex(out, "=== e2e: start "); i >= 0 {
		return out[i:]
	}
	return out
}

// checkAlive fails the test at once if the agent exited.
func (a *persistentAgent) checkAlive(t *testing.T) {
	t.Helper()
	select {
	case <-a.exited:
		t.Fatalf("agent %s exited (%v); its output:\n%s", a.name, a.err, a.sinceLastStart())
	default:
	}
}

// waitReady waits until the agent serves: a server knows its leader, and
// a combined agent's node is ready. A client-only agent is ready once its
// node is ready on the server that api (the server's client) talks to.
func (a *persistentAgent) waitReady(t *testing.T, timeout time.Duration) {
	t.Helper()
	c := a.client(t)
	if a.role != roleClient {
		waitFor(t, timeout, "agent "+a.name+" to know its leader", func() (bool, string) {
			a.checkAlive(t)
			leader, err := c.Status().Leader()
			if err != nil {
				return false, err.Error()
			}
			return leader != "", "no leader yet"
		})
	}
	if a.role == roleCombined {
		a.waitNodeReady(t, c, timeout)
	}
}

// waitNodeReady waits until the node named like the agent is ready in the
// view of c.
func (a *persistentAgent) waitNodeReady(t *testing.T, c *api.Client, timeout time.Duration) {
	t.Helper()
	waitFor(t, timeout, "the node of agent "+a.name+" to be ready", func() (bool, string) {
		a.checkAlive(t)
		nodes, _, err := c.Nodes().List(nil)
		if err != nil {
			return false, err.Error()
		}
		for _, n := range nodes {
			if n.Name == a.name {
				return n.Status == api.NodeStatusReady, "node status " + n.Status
			}
		}
		return false, fmt.Sprintf("no node named %q among %d", a.name, len(nodes))
	})
}

// kill9 SIGKILLs the agent's process only (not its group: systemd's
// KillMode=process) and waits until it is gone.
func (a *persistentAgent) kill9(t *testing.T) {
	t.Helper()
	a.checkAlive(t)
	if err := syscall.Kill(a.cmd.Process.Pid, syscall.SIGKILL); err != nil {
		t.Fatalf("kill -9 agent %s: %v", a.name, err)
	}
	select {
	case <-a.exited:
	case <-time.After(30 * time.Second):
		t.Fatalf("agent %s did not die within 30s of SIGKILL", a.name)
	}
}

// interrupt stops the agent with SIGINT (a non-dev agent leaves its tasks
// running) and fails the test unless it exits cleanly in time.
func (a *persistentAgent) interrupt(t *testing.T) {
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

// client returns an API client for the agent's HTTP API.
func (a *persistentAgent) client(t *testing.T) *api.Client {
	t.Helper()
	c, err := api.NewClient(&api.Config{Address: a.addr, HTTPClient: &http.Client{Timeout: 30 * time.Second}})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// cli runs the drover CLI against the agent.
func (a *persistentAgent) cli(t *testing.T, args ...string) cliResult {
	t.Helper()
	return (&agent{addr: a.addr}).cli(t, args...)
}

// persistentSupport caches whether the binary under test has a
// production agent; see requirePersistentAgent.
var persistentSupport struct {
	once sync.Once
	why  string // non-empty: why the tests must skip
}

// requirePersistentAgent skips the test unless `drover agent -h` offers
// -config (the production agent, with state on disk).
func requirePersistentAgent(t *testing.T) {
	t.Helper()
	requireBinary(t)
	persistentSupport.once.Do(func() {
		out, _ := exec.Command(droverBin, "agent", "-h").CombinedOutput()
		if !strings.Contains(string(out), "-config") {
			persistentSupport.why = "the production agent has not landed: `drover agent -h` offers no -config, so no agent can keep its state across a restart"
		}
	})
	if persistentSupport.why != "" {
		t.Skip(persistentSupport.why)
	}
}
