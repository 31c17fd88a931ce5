package shim

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"strings"
	"syscall"
	"time"

	"github.com/drover-io/drover/drivers/shared/isolation"
	"github.com/drover-io/drover/drivers/shared/logrotate"
)

// Subcommand is the first argument that makes the drover binary a shim:
// "drover shim -state-dir <dir>".
const Subcommand = "shim"

// readyFD is the file descriptor on which a starting shim reports to Start
// its State or its start error.
const readyFD = 3

// readyMsg is one line on the ready pipe.
type readyMsg struct {
	State *State `json:"state,omitempty"`
	Error string `json:"error,omitempty"`
}

// RunIfShim runs the shim when args (the command line without the program
// name) start with Subcommand, and returns its exit code and true; else it
// returns 0, false and does nothing. Call it first thing in the CLI's Run.
func RunIfShim(args []string) (int, bool) {
	if len(args) == 0 || args[0] != Subcommand {
		return 0, false
	}
	return Main(args[1:]), true
}

// Main is the shim process's entry point; it returns the process's exit
// code. args are the arguments after the subcommand.
//
// Started by Start (flags -state-dir and -detached) in a session of its
// own, Main reads the spec, serves the socket, runs the task and exits
// once the task's exit is recorded.
func Main(args []string) int {
	fs := flag.NewFlagSet(Subcommand, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	stateDir := fs.String("state-dir", "", "directory holding spec.json")
	detached := fs.Bool("detached", false, "internal: marks a shim's command line (Start passes it)")
	identity := fs.Bool("identity", false, "print what agent and shim binary must agree on (see Command)")
	err := fs.Parse(args)
	if err == nil && *identity {
		fmt.Println(Identity())
		return 0
	}
	if err != nil || *stateDir == "" {
		fmt.Fprintln(os.Stderr, "usage: drover shim -state-dir <dir> (internal: started by task drivers)")
		return 2
	}
	ready := readyPipe()
	if ready == nil {
		fmt.Fprintln(os.Stderr, "drover shim: no ready pipe on fd 3; shims are started by task drivers (shim.Start)")
		return 2
	}
	_ = *detached // kept on the command line: tools find shims by it
	return supervise(*stateDir, ready)
}

// readyPipe returns the ready pipe Start passes as fd 3, or nil when fd 3
// is not a pipe (the shim was not started by Start, and fd 3 may belong to
// the Go runtime).
func readyPipe() *os.File {
	var st syscall.Stat_t
	if err := syscall.Fstat(readyFD, &st); err != nil || st.Mode&syscall.S_IFMT != syscall.S_IFIFO {
		return nil
	}
	return os.NewFile(readyFD, "ready")
}

func writeReady(w io.Writer, m readyMsg) {
	b, _ := json.Marshal(m)
	_, _ = w.Write(append(b, '\n'))
}

// shimEnv is env (the agent's) with the Go runtime settings that keep a
// shim small from its first instruction: one P (each P caches spans of
// every size class), no garbage collection during start-up (settleMemory
// decides once the shim runs) and no heap profiling. The task gets none
// of this: its environment is the spec's.
func shimEnv(env []string) []string {
	out := make([]string, 0, len(env)+3)
	godebug := ""
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		switch k {
		case "GOMAXPROCS", "GOGC", "GOMEMLIMIT":
			continue
		case "GODEBUG":
			godebug = v + ","
			continue
		}
		out = append(out, kv)
	}
	return append(out, "GOMAXPROCS=1", "GOGC=off", "GODEBUG="+godebug+"memprofilerate=0")
}

// gcHeadroom is how far the memory limit is set above what the shim uses
// once running. The runtime collects some way before the limit (it keeps
// at least 1 MiB of headroom of its own), so with this limit a shim that
// answers requests collects about every quarter MiB it allocates
// (docs/performance.md).
const gcHeadroom = 1 << 20

// settleMemory sets the shim's garbage collection policy once it runs:
// collect only when its memory grows gcHeadroom over what it uses now
// (plus extra for requests in flight). GOGC cannot keep a heap this small:
// the runtime lets a heap grow by at least 1 MiB between collections
// whatever GOGC says; under a memory limit it does not. The first
// collections also cost memory of their own (the runtime's bookkeeping
// for each size class of object in use), so start-up garbage is collected
// now only when there is more of it than the headroom (the drover binary's
// package initialisers leave that much; drover-shim's do not). An idle
// shim allocates nothing, so it never collects again. settleMemory
// returns the memory limit's base, for setMemoryLimit.
func settleMemory() int64 {
	runtime.GOMAXPROCS(1) // for shims started without shimEnv
	debug.SetGCPercent(-1)
	s := []metrics.Sample{
		{Name: "/memory/classes/total:bytes"},
		{Name: "/memory/classes/heap/released:bytes"},
		{Name: "/memory/classes/heap/objects:bytes"},
	}
	metrics.Read(s)
	if s[2].Value.Uint64() > gcHeadroom {
		debug.FreeOSMemory()
		metrics.Read(s)
	}
	base := int64(s[0].Value.Uint64() - s[1].Value.Uint64())
	setMemoryLimit(base, 0)
	return base
}

// perRequestMemory is what the memory limit grows by for each request in
// flight (two goroutine stacks, the connection and its buffers), so that
// many concurrent requests do not make the garbage collector run without
// end.
const perRequestMemory = 32 << 10

// setMemoryLimit sets the runtime's memory limit for base (settleMemory's)
// and n requests in flight.
func setMemoryLimit(base int64, n int) {
	debug.SetMemoryLimit(base + gcHeadroom + int64(n)*perRequestMemory)
}

// supervise is the detached shim: it runs the task described by
// <stateDir>/spec.json and exits after recording its exit.
func supervise(stateDir string, ready *os.File) int {
	// Pdeathsig follows the thread that forks the task: keep this goroutine
	// on one thread that lives until the shim exits.
	runtime.LockOSThread()
	runtime.GOMAXPROCS(1)
	fail := func(err error) int {
		writeReady(ready, readyMsg{Error: err.Error()})
		ready.Close()
		return 1
	}
	// The task starts from this thread: with default signal dispositions
	// and an empty mask, whatever the agent that started the shim had
	// (see isolation.DefaultSignals).
	if err := isolation.DefaultSignals(); err != nil {
		return fail(err)
	}
	// The spec stays locked while the shim lives: an agent that lost the
	// shim's State finds it by the lock and the published state (find.go).
	lock, err := lockSpec(stateDir)
	if err != nil {
		return fail(err)
	}
	defer lock.Close()
	spec, err := readSpecFrom(lock)
	if err != nil {
		return fail(err)
	}
	logf, err := os.OpenFile(filepath.Join(stateDir, logFile), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return fail(fmt.Errorf("open shim log: %w", err))
	}
	defer logf.Close()
	log := slog.New(slog.NewTextHandler(logf, nil)).With("task_id", spec.ID, "shim_pid", os.Getpid())

	stdout, err := openLog(spec, spec.StdoutPath)
	if err != nil {
		return fail(fmt.Errorf("task stdout: %w", err))
	}
	stderr, err := openLog(spec, spec.StderrPath)
	if err != nil {
		stdout.Close()
		return fail(fmt.Errorf("task stderr: %w", err))
	}
	ln, err := listen(spec.SocketPath)
	if err != nil {
		stdout.Close()
		stderr.Close()
		return fail(err)
	}
	sup, err := startTask(spec, log, time.Now)
	if err != nil {
		ln.Close()
		stdout.Close()
		stderr.Close()
		log.Error("start task", "error", err)
		return fail(err)
	}
	st := shimState(spec, sup, log)
	if err := writeState(st); err != nil {
		log.Error("publish shim state", "error", err)
	}
	log.Info("task started", "task_pid", sup.pid, "command", spec.Command)

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	srv := &server{ln: ln, sup: sup, log: log, memoryBase: settleMemory()}
	serving := make(chan struct{})
	go func() { defer close(serving); srv.serve(ctx) }()
	writeReady(ready, readyMsg{State: st})
	ready.Close()

	_, runErr := sup.run(stdout, stderr)

	// The exit is on disk and published: answer the requests in flight,
	// then leave. Clients that come later read the exit file.
	ln.Close()
	<-serving
	handled := make(chan struct{})
	go func() { srv.wg.Wait(); close(handled) }()
	select {
	case <-handled:
	case <-time.After(2 * time.Second):
		cancel()
		<-handled
	}
	if runErr != nil {
		log.Error("shim finished with errors", "error", runErr)
		return 1
	}
	return 0
}

// openLog opens the rotated log whose base path is base, beneath
// spec.LogRoot when set.
func openLog(spec *Spec, base string) (*logrotate.FileRotator, error) {
	maxSize := int64(spec.MaxFileSizeMB) << 20
	dir, name := filepath.Dir(base), filepath.Base(base)
	if spec.LogRoot != "" {
		return logrotate.NewFileRotatorBeneath(spec.LogRoot, dir, name, spec.MaxFiles, maxSize)
	}
	return logrotate.NewFileRotator(dir, name, spec.MaxFiles, maxSize)
}

// shimState is the State the agent persists for this shim and task.
func shimState(spec *Spec, sup *supervisor, log *slog.Logger) *State {
	st := &State{
		Version:    StateVersion,
		ShimPID:    os.Getpid(),
		TaskPID:    sup.pid,
		BootID:     bootID(),
		SocketPath: spec.SocketPath,
		StateDir:   spec.StateDir,
		StartedAt:  sup.startedAt,
		Cgroup:     sup.cg,
	}
	if self, err := readProcStat(os.Getpid()); err == nil {
		st.ShimStartTicks = self.startTicks
	} else {
		log.Warn("read shim start time", "error", err)
	}
	// The task is not reaped before run, so its stat is there.
	if task, err := readProcStat(sup.pid); err == nil {
		st.TaskStartTicks = task.startTicks
	} else {
		log.Warn("read task start time", "error", err)
	}
	return st
}
