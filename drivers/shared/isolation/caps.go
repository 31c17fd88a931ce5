package isolation

import (
	"fmt"
	"os"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// capabilityNumbers maps capability names (without "CAP_", lower case) to
// their numbers (linux/capability.h).
var capabilityNumbers = map[string]int{
	"chown": 0, "dac_override": 1, "dac_read_search": 2, "fowner": 3, "fsetid": 4,
	"kill": 5, "setgid": 6, "setuid": 7, "setpcap": 8, "linux_immutable": 9,
	"net_bind_service": 10, "net_broadcast": 11, "net_admin": 12, "net_raw": 13,
	"ipc_lock": 14, "ipc_owner": 15, "sys_module": 16, "sys_rawio": 17,
	"sys_chroot": 18, "sys_ptrace": 19, "sys_pacct": 20, "sys_admin": 21,
	"sys_boot": 22, "sys_nice": 23, "sys_resource": 24, "sys_time": 25,
	"sys_tty_config": 26, "mknod": 27, "lease": 28, "audit_write": 29,
	"audit_control": 30, "setfcap": 31, "mac_override": 32, "mac_admin": 33,
	"syslog": 34, "wake_alarm": 35, "block_suspend": 36, "audit_read": 37,
	"perfmon": 38, "bpf": 39, "checkpoint_restore": 40,
}

// DefaultCapabilities are the capabilities a task may hold (Nomad's exec
// driver default): all others are dropped from its bounding set, so
// neither a root task nor a setuid program in its root can use them.
func DefaultCapabilities() []string {
	return []string{
		"audit_write", "chown", "dac_override", "fowner", "fsetid", "kill", "mknod",
		"net_bind_service", "setfcap", "setgid", "setpcap", "setuid", "sys_chroot",
	}
}

// ParseCapabilities checks capability names ("NET_RAW", "cap_net_raw" or
// "net_raw") and returns them normalised.
func ParseCapabilities(names []string) ([]string, error) {
	out := make([]string, 0, len(names))
	for _, n := range names {
		c := strings.TrimPrefix(strings.ToLower(strings.TrimSpace(n)), "cap_")
		if _, ok := capabilityNumbers[c]; !ok {
			return nil, fmt.Errorf("unknown capability %q", n)
		}
		out = append(out, c)
	}
	return out, nil
}

// dropCapabilities removes from the calling thread's bounding set every
// capability not in keep. The caller must have locked its OS thread and
// execve from it: the bounding set is per thread.
func dropCapabilities(keep []string) error {
	names, err := ParseCapabilities(keep)
	if err != nil {
		return err
	}
	allowed := make(map[int]bool, len(names))
	for _, n := range names {
		allowed[capabilityNumbers[n]] = true
	}
	last := lastCapability()
	for c := 0; c <= last; c++ {
		if allowed[c] {
			continue
		}
		if err := unix.Prctl(unix.PR_CAPBSET_DROP, uintptr(c), 0, 0, 0); err != nil {
			if err == unix.EINVAL {
				break // beyond what this kernel knows
			}
			return fmt.Errorf("drop capability %d: %w", c, err)
		}
	}
	return nil
}

// lastCapability returns the highest capability number of the kernel.
func lastCapability() int {
	b, err := os.ReadFile("/proc/sys/kernel/cap_last_cap")
	if err != nil {
		return 40
	}
	n, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		return 40
	}
	return n
}
