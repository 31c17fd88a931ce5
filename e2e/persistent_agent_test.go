package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
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
	*agent     // the process of the latest start; its output holds every start's
	role       persistentRole
	configPath string
	httpPort   int
	rpcPort    int
	// args are more flags for the next start (-recover).
	args []string
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
		agent:    &agent{name: name, dataDir: t.TempDir()},
		role:     role,
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

// start starts the agent process (again) on the same config and data dir
// in a process group of its own, and returns at once; see waitReady.
func (a *persistentAgent) start(t *testing.T) {
	t.Helper()
	a.spawn(t, append([]string{"agent", "-config", a.configPath}, a.args...), nil,
		func(c *exec.Cmd) { c.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} })
}

// waitReady waits until the agent serves: a server knows its leader, and
// a combined agent's node is ready. A client-only agent is ready once its
// node is ready on the server that api (the server's client) talks to.
func (a *persistentAgent) waitReady(t *testing.T, timeout time.Duration) {
	t.Helper()
	if a.role != roleClient {
		a.waitLeader(t, timeout)
	}
	if a.role == roleCombined {
		a.waitNodeReady(t, a.client(t), a.name, timeout)
	}
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
