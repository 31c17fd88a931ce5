package isolation

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// firstPassedFD is the number the init stage sees the first of Start's
// passed descriptors as (after stdio, the spec pipe and the error pipe).
const firstPassedFD = errFD + 1

// prepareUserNS readies spec for an init stage that runs in a user
// namespace, where the host's root-only paths are out of its reach, and
// where a mount of the host's cannot be bound: it returns a copy of spec
// for the init stage with detached copies (open_tree(2)) of the root and
// of every mount source, made here as the host's root (read-only ones
// made so), which the init stage attaches (move_mount(2)); the files to
// pass, in order, as fds firstPassedFD...; and it creates, as the host's
// root, the mount points in the root that the task's user could not
// (those not below another mount). Missing optional sources are dropped.
// The caller closes the files.
func prepareUserNS(spec *Spec) (*Spec, []*os.File, error) {
	s := *spec
	var files []*os.File
	fail := func(err error) (*Spec, []*os.File, error) {
		for _, f := range files {
			f.Close()
		}
		return nil, nil, err
	}
	pass := func(path string, readOnly bool) (int, error) {
		fd, err := unix.OpenTree(unix.AT_FDCWD, path, unix.OPEN_TREE_CLONE|unix.OPEN_TREE_CLOEXEC|unix.AT_RECURSIVE)
		if err != nil {
			return 0, &os.PathError{Op: "open_tree", Path: path, Err: err}
		}
		files = append(files, os.NewFile(uintptr(fd), path))
		if readOnly {
			attr := unix.MountAttr{Attr_set: unix.MOUNT_ATTR_RDONLY}
			if err := unix.MountSetattr(fd, "", unix.AT_EMPTY_PATH|unix.AT_RECURSIVE, &attr); err != nil {
				return 0, &os.PathError{Op: "make read-only", Path: path, Err: err}
			}
		}
		return firstPassedFD + len(files) - 1, nil
	}
	// Mount points first: the root's copy below is taken after them.
	targets := make([]string, 0, len(spec.Mounts))
	for _, m := range spec.Mounts {
		targets = append(targets, filepath.Clean(m.Target))
	}
	type source struct {
		m     Mount
		isDir bool
	}
	var sources []source
	for _, m := range spec.Mounts {
		fi, err := os.Lstat(m.Source)
		if errors.Is(err, os.ErrNotExist) && m.Optional {
			continue
		}
		if err != nil {
			return fail(fmt.Errorf("mount %s: %w", m.Source, err))
		}
		top := !below(filepath.Clean(m.Target), targets)
		if fi.Mode()&os.ModeSymlink != 0 {
			if m.Link, err = os.Readlink(m.Source); err != nil {
				return fail(fmt.Errorf("mount %s: %w", m.Source, err))
			}
			if top {
				if err := copySymlink(spec.RootDir, m); err != nil {
					return fail(err)
				}
			}
		} else if top {
			if _, err := mountPoint(spec.RootDir, m.Target, fi.IsDir()); err != nil {
				return fail(err)
			}
		}
		sources = append(sources, source{m, fi.IsDir()})
	}
	for _, dir := range []string{"/proc", "/dev"} {
		if _, err := mountPoint(spec.RootDir, dir, true); err != nil {
			return fail(err)
		}
	}
	fd, err := pass(spec.RootDir, false)
	if err != nil {
		return fail(fmt.Errorf("user namespace: task root: %w", err))
	}
	s.RootFD = fd
	s.Mounts = nil
	for _, src := range sources {
		m := src.m
		if m.Link == "" {
			if m.FD, err = pass(m.Source, m.ReadOnly); err != nil {
				return fail(fmt.Errorf("mount %s: %w", m.Source, err))
			}
		}
		s.Mounts = append(s.Mounts, m)
	}
	s.Devices = nil
	for _, d := range spec.Devices {
		if d.FD, err = pass(d.Source, d.ReadOnly); err != nil {
			return fail(fmt.Errorf("device %s: %w", d.Source, err))
		}
		s.Devices = append(s.Devices, d)
	}
	return &s, files, nil
}

// userNSStage is where the init stage in a user namespace attaches the
// copy of the task's root (in its own mount namespace only) before it
// pivots into it: a directory every host has and anyone may reach.
const userNSStage = "/tmp"

// attachRoot attaches the detached copy of the task's root (fd) at
// userNSStage and returns that path.
func attachRoot(fd int) (string, error) {
	if err := unix.MoveMount(fd, "", unix.AT_FDCWD, userNSStage, unix.MOVE_MOUNT_F_EMPTY_PATH); err != nil {
		return "", fmt.Errorf("attach the task's root at %s: %w", userNSStage, err)
	}
	return userNSStage, nil
}

// attachMount attaches the detached copy of a mount source (fd) at target.
func attachMount(fd int, target string) error {
	if err := unix.MoveMount(fd, "", unix.AT_FDCWD, target, unix.MOVE_MOUNT_F_EMPTY_PATH); err != nil {
		return fmt.Errorf("attach at %s: %w", target, err)
	}
	return nil
}

// passInit opens the init stage's binary for a start in a user namespace
// and returns the path by which the new process executes it: the
// binary's descriptor, which the caller passes as fd num. The process
// executes it as the task's user, who may not be able to walk to the
// binary (a test binary in a 0700 directory).
func passInit(path string, num int) (*os.File, string, error) {
	fd, err := unix.Open(path, unix.O_PATH|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, "", fmt.Errorf("user namespace: init stage binary: %w", &os.PathError{Op: "open", Path: path, Err: err})
	}
	return os.NewFile(uintptr(fd), path), "/proc/self/fd/" + strconv.Itoa(num), nil
}

// below reports whether target lies below one of targets.
func below(target string, targets []string) bool {
	for _, t := range targets {
		if t != target && (t == "/" || strings.HasPrefix(target, t+"/")) {
			return true
		}
	}
	return false
}

// setUserNS makes cmd start in the user namespace spec.UserNS, as the
// task's user: as root there when the task runs as root, otherwise as the
// task's user with the ambient capabilities the init stage needs to build
// the root (it clears them before running the task).
func setUserNS(attr *syscall.SysProcAttr, spec *Spec) {
	attr.Cloneflags |= syscall.CLONE_NEWUSER
	attr.UidMappings, attr.GidMappings = spec.UserNS.sysMappings()
	// The init stage sets the task's groups, which the namespace maps.
	attr.GidMappingsEnableSetgroups = true
	attr.Credential = &syscall.Credential{Uid: spec.UID, Gid: spec.GID, Groups: spec.Groups}
	if spec.UID != 0 {
		attr.AmbientCaps = initAmbientCaps
	}
}

// closePassedFDs closes the descriptors Start passed to the init stage:
// none of them may reach the task.
func closePassedFDs(spec *Spec) {
	for _, fd := range []int{spec.RootFD, spec.InitFD} {
		if fd > 0 {
			_ = syscall.Close(fd)
		}
	}
	for _, ms := range [][]Mount{spec.Mounts, spec.Devices} {
		for _, m := range ms {
			if m.FD > 0 {
				_ = syscall.Close(m.FD)
			}
		}
	}
}

// clearAmbientCaps empties the ambient capability set, so that the task's
// command gains none on execve.
func clearAmbientCaps() error {
	err := unix.Prctl(unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0)
	if err != nil && err != unix.EINVAL { // EINVAL: a kernel without ambient capabilities
		return fmt.Errorf("clear ambient capabilities: %w", err)
	}
	return nil
}
