package isolation

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// UserNS is the user namespace a task runs in (Spec.UserNS): which of its
// user and group IDs exist in it, and which host IDs they are. Every other
// ID, root's included unless the task runs as root, is unmapped: files the
// host's root owns are "nobody" in the task, and no capability the task
// holds in its namespace applies to them.
type UserNS struct {
	UIDs []IDMap `json:"uids"`
	GIDs []IDMap `json:"gids"`
}

// IDMap maps one ID inside the namespace to one on the host.
type IDMap struct {
	Inside uint32 `json:"inside"`
	Host   uint32 `json:"host"`
}

// NewUserNS returns the namespace of a task that runs as uid, gid and
// groups: each maps to the same ID on the host, so the task's files keep
// their owners and the task dir's bind mounts stay writable; but a task
// that runs as root (uid 0, gid 0) is root in its namespace only, mapped
// to rootUID and rootGID on the host (nobody), so that root in the task is
// not root on the host.
func NewUserNS(uid, gid uint32, groups []uint32, rootUID, rootGID uint32) *UserNS {
	host := func(id, root uint32) uint32 {
		if id == 0 {
			return root
		}
		return id
	}
	ns := &UserNS{UIDs: []IDMap{{Inside: uid, Host: host(uid, rootUID)}}}
	seenIn := map[uint32]bool{}
	seenHost := map[uint32]bool{}
	for _, g := range append([]uint32{gid}, groups...) {
		h := host(g, rootGID)
		if seenIn[g] || seenHost[h] {
			continue // a mapping's IDs may appear once on each side
		}
		seenIn[g], seenHost[h] = true, true
		ns.GIDs = append(ns.GIDs, IDMap{Inside: g, Host: h})
	}
	return ns
}

// HostUID returns the host uid of uid inside the namespace.
func (u *UserNS) HostUID(uid uint32) (uint32, bool) { return lookupID(u.UIDs, uid) }

// HostGID returns the host gid of gid inside the namespace.
func (u *UserNS) HostGID(gid uint32) (uint32, bool) { return lookupID(u.GIDs, gid) }

func lookupID(m []IDMap, id uint32) (uint32, bool) {
	for _, e := range m {
		if e.Inside == id {
			return e.Host, true
		}
	}
	return 0, false
}

// validate checks that the task's user and groups exist in the namespace
// and that no mapping makes the host's root.
func (u *UserNS) validate(uid, gid uint32, groups []uint32) error {
	var errs []error
	if _, ok := u.HostUID(uid); !ok {
		errs = append(errs, fmt.Errorf("user namespace: uid %d is not mapped", uid))
	}
	for _, g := range append([]uint32{gid}, groups...) {
		if _, ok := u.HostGID(g); !ok {
			errs = append(errs, fmt.Errorf("user namespace: gid %d is not mapped", g))
		}
	}
	for _, m := range append(append([]IDMap(nil), u.UIDs...), u.GIDs...) {
		if m.Host == 0 {
			errs = append(errs, errors.New("user namespace: nothing may map to the host's root (uid or gid 0)"))
			break
		}
	}
	return errors.Join(errs...)
}

// sysMappings returns the namespace's maps for SysProcAttr.
func (u *UserNS) sysMappings() (uids, gids []syscall.SysProcIDMap) {
	for _, m := range u.UIDs {
		uids = append(uids, syscall.SysProcIDMap{ContainerID: int(m.Inside), HostID: int(m.Host), Size: 1})
	}
	for _, m := range u.GIDs {
		gids = append(gids, syscall.SysProcIDMap{ContainerID: int(m.Inside), HostID: int(m.Host), Size: 1})
	}
	return uids, gids
}

// initAmbientCaps are the capabilities the init stage keeps, in its user
// namespace, when the task's user is not root there: what it needs to
// build the task's root (mounts, pivot_root or chroot, the hostname, the
// loopback device), drop the bounding set and set the task's groups. They
// are cleared before the task's command runs.
var initAmbientCaps = []uintptr{
	unix.CAP_SYS_ADMIN, unix.CAP_SYS_CHROOT, unix.CAP_SETPCAP, unix.CAP_SETUID,
	unix.CAP_SETGID, unix.CAP_NET_ADMIN,
}

// UserNamespaces reports whether this kernel lets the agent give tasks
// user namespaces: /proc/sys/user/max_user_namespaces is above 0 (a root
// agent is not subject to Debian's kernel.unprivileged_userns_clone or
// Ubuntu's AppArmor restriction, which bind unprivileged users only), and
// it has the mount API Start hands the task's root over with
// (open_tree(2) and mount_setattr(2), Linux 5.12). The error says why not.
func UserNamespaces() error {
	b, err := os.ReadFile("/proc/sys/user/max_user_namespaces")
	if err != nil {
		if _, serr := os.Stat("/proc/self/ns/user"); serr != nil {
			return fmt.Errorf("the kernel has no user namespaces (CONFIG_USER_NS): %w", serr)
		}
		return fmt.Errorf("read the user namespace limit: %w", err)
	}
	n, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		return fmt.Errorf("read the user namespace limit: %q: %w", b, err)
	}
	if n <= 0 {
		return errors.New("user namespaces are disabled (sysctl user.max_user_namespaces = 0)")
	}
	fd, err := unix.OpenTree(unix.AT_FDCWD, "/", unix.OPEN_TREE_CLONE|unix.OPEN_TREE_CLOEXEC)
	if err != nil {
		return fmt.Errorf("the kernel cannot copy mounts for a user namespace (open_tree, Linux 5.2): %w", err)
	}
	defer unix.Close(fd)
	if err := unix.MountSetattr(fd, "", unix.AT_EMPTY_PATH, &unix.MountAttr{}); err == unix.ENOSYS {
		return fmt.Errorf("the kernel cannot make mount copies read-only (mount_setattr, Linux 5.12): %w", err)
	}
	return nil
}

// taskIDMaps reads the uid_map and gid_map of process pid, relative to
// this process's user namespace: nil, nil when the process shares it.
func taskIDMaps(pid int) (*UserNS, error) {
	own, err1 := os.Readlink("/proc/self/ns/user")
	its, err2 := os.Readlink(fmt.Sprintf("/proc/%d/ns/user", pid))
	if err := errors.Join(err1, err2); err != nil {
		return nil, fmt.Errorf("user namespace of process %d: %w", pid, err)
	}
	if own == its {
		return nil, nil
	}
	read := func(name string) ([]IDMap, bool, error) {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/%s", pid, name))
		if err != nil {
			return nil, false, err
		}
		var out []IDMap
		for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
			f := strings.Fields(line)
			if len(f) != 3 {
				continue
			}
			in, err1 := strconv.ParseUint(f[0], 10, 32)
			host, err2 := strconv.ParseUint(f[1], 10, 32)
			size, err3 := strconv.ParseUint(f[2], 10, 32)
			if err := errors.Join(err1, err2, err3); err != nil {
				return nil, false, fmt.Errorf("%s of process %d: %q: %w", name, pid, line, err)
			}
			if in == 0 && host == 0 && size == 4294967295 {
				return nil, true, nil // the host's namespace
			}
			for i := uint64(0); i < size && i < 65536; i++ {
				out = append(out, IDMap{Inside: uint32(in + i), Host: uint32(host + i)})
			}
		}
		return out, false, nil
	}
	uids, hostNS, err := read("uid_map")
	if err != nil || hostNS {
		return nil, err
	}
	gids, _, err := read("gid_map")
	if err != nil {
		return nil, err
	}
	return &UserNS{UIDs: uids, GIDs: gids}, nil
}
