package isolation

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
)

// probeArg makes InitMain only check that it runs as PID 1 of a new pid
// namespace.
const probeArg = "probe"

// Probe checks that this host can run isolated tasks: it starts the init
// stage in new pid, mount, ipc and uts namespaces and has it report back.
// The error says what failed, for a driver's fingerprint.
func Probe(ctx context.Context, init InitCommand) error {
	if os.Geteuid() != 0 {
		return fmt.Errorf("isolation needs root (running as uid %d)", os.Geteuid())
	}
	args := append(append([]string(nil), init.Args...), probeArg)
	cmd := exec.CommandContext(ctx, init.Path, args...)
	cmd.Dir = "/"
	cmd.Env = []string{}
	if v, ok := os.LookupEnv("GORACE"); ok {
		// Lets tests built with -race skip the race runtime's exit delay.
		cmd.Env = append(cmd.Env, "GORACE="+v)
	}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	cmd.SysProcAttr = &syscall.SysProcAttr{
		Cloneflags: syscall.CLONE_NEWPID | syscall.CLONE_NEWNS | syscall.CLONE_NEWIPC | syscall.CLONE_NEWUTS,
	}
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("namespaces do not work: %w %s", err, strings.TrimSpace(out.String()))
	}
	return nil
}

// probeMain is InitMain's probe mode.
func probeMain() int {
	if os.Getpid() != 1 {
		fmt.Fprintf(os.Stderr, "init stage runs as pid %d, not as PID 1 of a new pid namespace\n", os.Getpid())
		return 3
	}
	return 0
}
