package isolation

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// Fds of the init stage's pipes (Start's ExtraFiles).
const (
	specFD = 3
	errFD  = 4
)

// defaultPath is the PATH a command is looked up in when Env has none.
const defaultPath = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

// RunIfInit runs the init stage when args (the command line without the
// program name) start with InitArg, and returns its exit code and true;
// else it returns 0, false and does nothing. Call it first thing in the
// CLI's Run.
func RunIfInit(args []string) (int, bool) {
	if len(args) == 0 || args[0] != InitArg {
		return 0, false
	}
	return InitMain(args[1:]), true
}

// InitMain is the init stage, run as "drover isolation-init" by Start in
// the task's new namespaces. It reads the Spec from fd 3 (which the parent
// sends once the process is in its cgroup), builds the task's root, drops
// privileges and execve's the command, so it returns only on failure: it
// then writes the reason to fd 4 and returns the exit code to use. With
// args ["enter"] it runs a command inside a running task instead (see
// Enter); with ["probe"] it only checks that it is PID 1 (see Probe).
func InitMain(args []string) int {
	if len(args) > 0 && args[0] == probeArg {
		return probeMain()
	}
	if !isPipe(specFD) || !isPipe(errFD) {
		fmt.Fprintln(os.Stderr, "isolation-init is started by drover to run a task; it is not meant to be run by hand")
		return 2
	}
	errPipe := os.NewFile(errFD, "isolation-status")
	fail := func(err error) int {
		fmt.Fprintf(errPipe, "%v", err)
		return 127
	}
	specPipe := os.NewFile(specFD, "isolation-spec")
	if len(args) > 0 && args[0] == enterArg {
		return enterMain(specPipe, errPipe)
	}
	var spec Spec
	err := json.NewDecoder(specPipe).Decode(&spec)
	specPipe.Close()
	if err != nil {
		return fail(fmt.Errorf("init stage: read spec: %w", err))
	}
	if err := spec.validate(); err != nil {
		return fail(fmt.Errorf("init stage: %w", err))
	}
	if err := armParentDeath(spec.DieWithParent); err != nil {
		return fail(fmt.Errorf("init stage: %w", err))
	}
	if spec.NetworkIsolation {
		if err := loopbackUp(); err != nil {
			return fail(fmt.Errorf("init stage: %w", err))
		}
	}
	root, err := rootPath(&spec)
	if err != nil {
		return fail(fmt.Errorf("init stage: %w", err))
	}
	if err := setupRoot(&spec, root); err != nil {
		return fail(fmt.Errorf("init stage: set up the task's root: %w", err))
	}
	if spec.Hostname != "" {
		if err := syscall.Sethostname([]byte(spec.Hostname)); err != nil {
			return fail(fmt.Errorf("init stage: set hostname: %w", err))
		}
	}
	if err := enterRoot(&spec, root); err != nil {
		return fail(fmt.Errorf("init stage: enter the task's root: %w", err))
	}
	closePassedFDs(&spec) // userns_start.go
	// The bounding set is per thread: drop on this one and execve from it.
	runtime.LockOSThread()
	caps := spec.Capabilities
	if caps == nil {
		caps = DefaultCapabilities()
	}
	if err := dropCapabilities(caps); err != nil {
		return fail(fmt.Errorf("init stage: %w", err))
	}
	if err := dropPrivileges(spec.UID, spec.GID, spec.Groups); err != nil {
		return fail(fmt.Errorf("init stage: %w", err))
	}
	// In a user namespace the init stage kept what it needed to build
	// the root as ambient capabilities: the task gets none of them.
	if err := clearAmbientCaps(); err != nil {
		return fail(fmt.Errorf("init stage: %w", err))
	}
	// A change of credentials clears the parent-death signal: arm it
	// again, on the thread that execve's.
	if err := armParentDeath(spec.DieWithParent); err != nil {
		return fail(fmt.Errorf("init stage: %w", err))
	}
	dir := spec.Dir
	if dir == "" {
		dir = "/"
	}
	if err := os.Chdir(dir); err != nil {
		return fail(fmt.Errorf("init stage: working directory %s: %w", dir, err))
	}
	path, err := lookPath(spec.Path, spec.Env)
	if err != nil {
		return fail(fmt.Errorf("init stage: %w", err))
	}
	// The task starts with default signal dispositions and an empty mask,
	// whatever the shim inherited.
	if err := DefaultSignals(); err != nil {
		return fail(fmt.Errorf("init stage: %w", err))
	}
	// no_new_privs and the default seccomp filter, last: nothing of the
	// task's runs before them.
	if err := installSeccomp(); err != nil { // seccomp.go
		return fail(fmt.Errorf("init stage: %w", err))
	}
	syscall.CloseOnExec(errFD)
	argv := append([]string{spec.Path}, spec.Args...)
	err = syscall.Exec(path, argv, spec.Env)
	return fail(fmt.Errorf("init stage: exec %s: %w", path, err))
}

// rootPath returns the path by which the init stage reaches the task's
// root: RootDir, or, in a user namespace, where it attached the copy of
// the root Start passed (the task's user may not be able to walk RootDir,
// and could not bind it).
func rootPath(spec *Spec) (string, error) {
	if spec.RootFD <= 0 {
		return spec.RootDir, nil
	}
	return attachRoot(spec.RootFD) // userns_start.go
}

// armParentDeath asks the kernel to SIGKILL this process when its parent
// dies. It is not set through SysProcAttr.Pdeathsig: the Go runtime's
// check that the parent still lives compares getppid(), which is 0 in a
// new pid namespace, and would kill the child at once. A SIGKILL from the
// parent's (ancestor) namespace does reach PID 1.
func armParentDeath(on bool) error {
	if !on {
		return nil
	}
	if err := unix.Prctl(unix.PR_SET_PDEATHSIG, uintptr(syscall.SIGKILL), 0, 0, 0); err != nil {
		return fmt.Errorf("set parent-death signal: %w", err)
	}
	return nil
}

// dropPrivileges switches to uid and gid (for every thread: the syscall
// package does so since Go 1.16).
func dropPrivileges(uid, gid uint32, groups []uint32) error {
	gs := make([]int, 0, len(groups))
	for _, g := range groups {
		gs = append(gs, int(g))
	}
	if err := syscall.Setgroups(gs); err != nil {
		return fmt.Errorf("set groups: %w", err)
	}
	if err := syscall.Setresgid(int(gid), int(gid), int(gid)); err != nil {
		return fmt.Errorf("set gid %d: %w", gid, err)
	}
	if err := syscall.Setresuid(int(uid), int(uid), int(uid)); err != nil {
		return fmt.Errorf("set uid %d: %w", uid, err)
	}
	return nil
}

// dropThreadPrivileges switches the calling thread alone to uid, gid and
// groups, with raw system calls: the syscall package's setters change
// every thread of the process, signalling each and waiting until each has
// run, which on a loaded machine costs a wait for every thread to be
// scheduled. It is for a stage that has locked its thread and execve's
// from it next (the enter stage): the command gets this thread's
// credentials, and execve ends the other threads, which run nothing but
// the Go runtime meanwhile.
func dropThreadPrivileges(uid, gid uint32, groups []uint32) error {
	gs := make([]int, 0, len(groups))
	for _, g := range groups {
		gs = append(gs, int(g))
	}
	if err := unix.Setgroups(gs); err != nil { // this thread only
		return fmt.Errorf("set groups: %w", err)
	}
	if _, _, errno := unix.RawSyscall(unix.SYS_SETRESGID, uintptr(gid), uintptr(gid), uintptr(gid)); errno != 0 {
		return fmt.Errorf("set gid %d: %w", gid, errno)
	}
	if _, _, errno := unix.RawSyscall(unix.SYS_SETRESUID, uintptr(uid), uintptr(uid), uintptr(uid)); errno != 0 {
		return fmt.Errorf("set uid %d: %w", uid, errno)
	}
	return nil
}

// lookPath finds command inside the (entered) root: a path with a slash as
// is, a bare name in env's PATH.
func lookPath(command string, env []string) (string, error) {
	if strings.Contains(command, "/") {
		return command, executable(command)
	}
	path := defaultPath
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "PATH="); ok {
			path = v
		}
	}
	for _, dir := range filepath.SplitList(path) {
		if dir == "" {
			dir = "."
		}
		p := filepath.Join(dir, command)
		if executable(p) == nil {
			return p, nil
		}
	}
	return "", fmt.Errorf("command %q not found in the task's PATH (%s) inside its root", command, path)
}

func executable(path string) error {
	fi, err := os.Stat(path)
	if err != nil {
		return fmt.Errorf("command %s: %w", path, err)
	}
	if fi.IsDir() || fi.Mode().Perm()&0o111 == 0 {
		return fmt.Errorf("command %s: %w", path, errors.New("not an executable file"))
	}
	return nil
}

// isPipe reports whether fd is an open pipe.
func isPipe(fd int) bool {
	var st syscall.Stat_t
	return syscall.Fstat(fd, &st) == nil && st.Mode&syscall.S_IFMT == syscall.S_IFIFO
}
