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

// ProbeUserNS checks that the init stage starts in a new user namespace
// (with the pid, mount, ipc and uts namespaces it owns) on this host: the
// kernel may allow user namespaces while a seccomp profile around the
// agent (a container's) refuses them. Call it after UserNamespaces.
func ProbeUserNS(ctx context.Context, init InitCommand) error {
	if os.Geteuid() != 0 {
		return fmt.Errorf("user namespaces for tasks need root (running as uid %d)", os.Geteuid())
	}
	// As root in the namespace, nobody on the host, which may not be able
	// to walk to the binary: it is executed through a descriptor.
	f, path, err := passInit(init.Path, 3) // the first ExtraFile

	if err != nil {
		return err
	}
	defer f.Close()
	args := append(append([]string(nil), init.Args...), probeArg)
	cmd := exec.CommandContext(ctx, path, args...)
	cmd.Args[0] = init.Path
	cmd.Dir = "/"
	cmd.Env = []string{}
	if v, ok := os.LookupEnv("GORACE"); ok {
		cmd.Env = append(cmd.Env, "GORACE="+v)
	}
	cmd.ExtraFiles = []*os.File{f}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	cmd.SysProcAttr = &syscall.SysProcAttr{
		Cloneflags:  syscall.CLONE_NEWUSER | syscall.CLONE_NEWPID | syscall.CLONE_NEWNS | syscall.CLONE_NEWIPC | syscall.CLONE_NEWUTS,
		UidMappings: []syscall.SysProcIDMap{{ContainerID: 0, HostID: overflowID, Size: 1}},
		GidMappings: []syscall.SysProcIDMap{{ContainerID: 0, HostID: overflowID, Size: 1}},
		Credential:  &syscall.Credential{},
	}
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("user namespaces do not work here: %w %s", err, strings.TrimSpace(out.String()))
	}
	return nil
}

// overflowID is the kernel's default ID of unmapped users and groups
// (nobody), which the probe runs as on the host.
const overflowID = 65534

// probeMain is InitMain's probe mode.
func probeMain() int {
	if os.Getpid() != 1 {
		fmt.Fprintf(os.Stderr, "init stage runs as pid %d, not as PID 1 of a new pid namespace\n", os.Getpid())
		return 3
	}
	return 0
}
