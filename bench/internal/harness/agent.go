package harness

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/drover-io/drover/api"
)

// Build compiles ./cmd/drover and ./cmd/drover-shim (the module of the
// working directory) into dir, as `make build` does, and returns the
// drover binary's path: its agent runs task shims with drover-shim.
func Build(dir string) (string, error) {
	for _, name := range []string{"drover", "drover-shim"} {
		cmd := exec.Command("go", "build", "-o", filepath.Join(dir, name), "github.com/drover-io/drover/cmd/"+name)
		if out, err := cmd.CombinedOutput(); err != nil {
			return "", fmt.Errorf("go build %s: %v\n%s", name, err, out)
		}
	}
	return filepath.Join(dir, "drover"), nil
}

// Role says what an Agent runs.
type Role int

// The roles of an Agent.
const (
	Combined Role = iota // server and client in one process
	Server               // server only
	Client               // client only, joining Servers
)

// Agent is a persistent `drover agent -config` subprocess (raw_exec
// enabled on a client) with its data dir in Dir.
type Agent struct {
	Bin  string
	Dir  string // the data dir
	Name string
	Role Role
	// Dev runs the agent with -dev (server and client in one process,
	// state in memory); the config file still sets its ports and data dir.
	Dev     bool
	Addr    string // HTTP API
	RPCAddr string // a server's RPC address, for clients' servers lists
	config  string
	logPath string // the output of the latest start
	cmd     *exec.Cmd
	exited  chan struct{}
	starts  int
}

// NewAgent writes the config of an agent under root (data dir root/data,
// config root/agent.hcl) on free ports; a Client joins servers (RPC
// addresses).
func NewAgent(bin, root, name string, role Role, servers ...string) (*Agent, error) {
	return newAgent(bin, root, name, role, false, servers)
}

// NewDevAgent is NewAgent for a combined agent started with -dev: server
// and client in one process, raft and client state in memory; its alloc
// dirs are under root/data, and it removes what it ran when it stops.
// The config suits drover and Nomad alike (Nomad's serf port included).
func NewDevAgent(bin, root, name string) (*Agent, error) {
	return newAgent(bin, root, name, Combined, true, nil)
}

func newAgent(bin, root, name string, role Role, dev bool, servers []string) (*Agent, error) {
	ports := make([]int, 3) // http, rpc, serf
	for i := range ports {
		p, err := freePort()
		if err != nil {
			return nil, err
		}
		ports[i] = p
	}
	port, rpc := ports[0], ports[1]
	a := &Agent{Bin: bin, Dir: filepath.Join(root, "data"), Name: name, Role: role, Dev: dev,
		Addr:    "http://127.0.0.1:" + strconv.Itoa(port),
		RPCAddr: "127.0.0.1:" + strconv.Itoa(rpc),
		config:  filepath.Join(root, "agent.hcl")}
	var b strings.Builder
	fmt.Fprintf(&b, "name      = %q\ndata_dir  = %q\nbind_addr = \"127.0.0.1\"\nlog_level = \"INFO\"\n\n", name, a.Dir)
	if dev {
		// Nomad's agents also listen on a serf port (4648 by default);
		// drover accepts the key with a warning.
		fmt.Fprintf(&b, "ports {\n  http = %d\n  rpc  = %d\n  serf = %d\n}\n\n", port, rpc, ports[2])
	} else {
		fmt.Fprintf(&b, "ports {\n  http = %d\n  rpc  = %d\n}\n\n", port, rpc)
	}
	if role != Client {
		b.WriteString("server {\n  enabled          = true\n  bootstrap_expect = 1\n}\n\n")
	}
	if role != Server {
		b.WriteString("client {\n  enabled = true\n")
		if dev {
			// Nomad's cloud fingerprinters probe metadata services, which
			// a test machine cannot reach (and which fail Nomad's start
			// on some builds); drover has none.
			b.WriteString("  options {\n    \"fingerprint.denylist\" = \"env_aws,env_gce,env_azure,env_digitalocean\"\n  }\n")
		}
		if len(servers) > 0 {
			q := make([]string, len(servers))
			for i, s := range servers {
				q[i] = strconv.Quote(s)
			}
			fmt.Fprintf(&b, "  servers = [%s]\n", strings.Join(q, ", "))
		}
		b.WriteString("}\n\nplugin \"raw_exec\" {\n  config {\n    enabled = true\n  }\n}\n")
	}
	cfg := b.String()
	if err := os.MkdirAll(a.Dir, 0o755); err != nil {
		return nil, err
	}
	if err := os.WriteFile(a.config, []byte(cfg), 0o644); err != nil {
		return nil, err
	}
	return a, nil
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// Start starts the agent process in a process group of its own, its
// output in a log file per start, and returns the time just before the
// exec.
func (a *Agent) Start() (time.Time, error) {
	a.starts++
	a.logPath = filepath.Join(filepath.Dir(a.Dir), fmt.Sprintf("agent-%d.log", a.starts))
	out, err := os.Create(a.logPath)
	if err != nil {
		return time.Time{}, err
	}
	defer out.Close()
	args := []string{"agent", "-config", a.config}
	if a.Dev {
		args = []string{"agent", "-dev", "-config", a.config}
	}
	a.cmd = exec.Command(a.Bin, args...)
	a.cmd.Stdout, a.cmd.Stderr = out, out
	a.cmd.Env = append(os.Environ(), "DROVER_ADDR=", "NOMAD_ADDR=")
	a.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	a.exited = make(chan struct{})
	t0 := time.Now()
	if err := a.cmd.Start(); err != nil {
		return t0, fmt.Errorf("start agent: %w", err)
	}
	cmd, exited := a.cmd, a.exited
	go func() {
		_ = cmd.Wait()
		close(exited)
	}()
	return t0, nil
}

// PID is the agent process's pid.
func (a *Agent) PID() int { return a.cmd.Process.Pid }

// Exited reports whether the agent process has exited.
func (a *Agent) Exited() bool {
	select {
	case <-a.exited:
		return true
	default:
		return false
	}
}

// Log returns the output of the latest start.
func (a *Agent) Log() string {
	b, _ := os.ReadFile(a.logPath)
	return string(b)
}

// LogTail returns the last n bytes of the output of the latest start
// ("..." first when cut), for an error report.
func (a *Agent) LogTail(n int) string {
	log := a.Log()
	if len(log) > n {
		return "...\n" + log[len(log)-n:]
	}
	return log
}

// LoadAvg returns the machine's 1-minute load average as /proc/loadavg
// writes it, "?" when it cannot be read: benchmarks print it beside their
// figures.
func LoadAvg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	if f := strings.Fields(string(b)); len(f) > 0 {
		return f[0]
	}
	return "?"
}

// LogCount counts s in the output of the latest start.
func (a *Agent) LogCount(s string) int { return strings.Count(a.Log(), s) }

// Client returns an API client of the agent.
func (a *Agent) Client() *api.Client {
	c, err := api.NewClient(&api.Config{Address: a.Addr, HTTPClient: &http.Client{Timeout: 30 * time.Second}})
	if err != nil {
		panic(err) // a constant, valid address
	}
	return c
}

// Poll calls cond every interval until it reports true, the agent exits,
// or timeout passes.
func (a *Agent) Poll(timeout, interval time.Duration, what string, cond func() (bool, string)) error {
	deadline := time.Now().Add(timeout)
	for {
		ok, why := cond()
		if ok {
			return nil
		}
		if a.Exited() {
			return fmt.Errorf("waiting for %s: the agent exited; its output:\n%s", what, a.Log())
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("timed out after %s waiting for %s: %s", timeout, what, why)
		}
		time.Sleep(interval)
	}
}

// WaitReady waits until the agent is ready: a server knows its leader;
// a client's node is ready in the view of c (a server's API; nil: the
// agent's own).
func (a *Agent) WaitReady(c *api.Client, timeout time.Duration) error {
	if c == nil {
		c = a.Client()
	}
	return a.Poll(timeout, 20*time.Millisecond, "a leader and a ready node", func() (bool, string) {
		if a.Role != Client {
			leader, err := a.Client().Status().Leader()
			if err != nil || leader == "" {
				return false, fmt.Sprintf("leader %q, %v", leader, err)
			}
		}
		if a.Role == Server {
			return true, ""
		}
		nodes, _, err := c.Nodes().List(nil)
		if err != nil {
			return false, err.Error()
		}
		for _, n := range nodes {
			if n.Name == a.Name && n.Status == api.NodeStatusReady {
				return true, ""
			}
		}
		return false, "node not ready"
	})
}

// Kill9 SIGKILLs the agent process alone and waits for it.
func (a *Agent) Kill9() error {
	if err := syscall.Kill(a.PID(), syscall.SIGKILL); err != nil {
		return fmt.Errorf("kill -9 agent: %w", err)
	}
	select {
	case <-a.exited:
		return nil
	case <-time.After(30 * time.Second):
		return errors.New("the agent did not die within 30s of SIGKILL")
	}
}

// Interrupt stops the agent with SIGINT (its tasks keep running).
func (a *Agent) Interrupt() error {
	if a.cmd == nil || a.Exited() {
		return nil
	}
	if err := a.cmd.Process.Signal(syscall.SIGINT); err != nil {
		return fmt.Errorf("interrupt agent: %w", err)
	}
	select {
	case <-a.exited:
		return nil
	case <-time.After(60 * time.Second):
		_ = syscall.Kill(a.PID(), syscall.SIGKILL)
		return errors.New("the agent did not exit within 60s of SIGINT")
	}
}

// KillLeftovers SIGKILLs every shim under the data dir and its task's
// process group; it returns how many shims it killed.
func (a *Agent) KillLeftovers() int {
	t, err := ScanTree(a.Dir)
	if err != nil {
		return 0
	}
	for task := range t.Tasks {
		_ = syscall.Kill(-task, syscall.SIGKILL)
	}
	for shim := range t.Shims {
		_ = syscall.Kill(shim, syscall.SIGKILL)
	}
	return len(t.Shims)
}
