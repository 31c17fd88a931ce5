package docker

import (
	"fmt"
	"slices"
	"strings"
)

// allCaps are the Linux capabilities by name, without the CAP_ prefix.
var allCaps = []string{
	"CHOWN", "DAC_OVERRIDE", "DAC_READ_SEARCH", "FOWNER", "FSETID", "KILL", "SETGID", "SETUID",
	"SETPCAP", "LINUX_IMMUTABLE", "NET_BIND_SERVICE", "NET_BROADCAST", "NET_ADMIN", "NET_RAW",
	"IPC_LOCK", "IPC_OWNER", "SYS_MODULE", "SYS_RAWIO", "SYS_CHROOT", "SYS_PTRACE", "SYS_PACCT",
	"SYS_ADMIN", "SYS_BOOT", "SYS_NICE", "SYS_RESOURCE", "SYS_TIME", "SYS_TTY_CONFIG", "MKNOD",
	"LEASE", "AUDIT_WRITE", "AUDIT_CONTROL", "SETFCAP", "MAC_OVERRIDE", "MAC_ADMIN", "SYSLOG",
	"WAKE_ALARM", "BLOCK_SUSPEND", "AUDIT_READ", "PERFMON", "BPF", "CHECKPOINT_RESTORE",
}

// dockerDefaultCaps are the capabilities Docker gives a container that
// asks for no change.
var dockerDefaultCaps = []string{
	"AUDIT_WRITE", "CHOWN", "DAC_OVERRIDE", "FOWNER", "FSETID", "KILL", "MKNOD", "NET_BIND_SERVICE",
	"NET_RAW", "SETFCAP", "SETGID", "SETPCAP", "SETUID", "SYS_CHROOT",
}

// capSet is a set of capability names (upper case, no CAP_ prefix).
type capSet map[string]bool

// parseCaps parses capability names in any case, with or without the CAP_
// prefix; "all" stands for every capability.
func parseCaps(names []string) (capSet, error) {
	out := capSet{}
	var unknown []string
	for _, n := range names {
		c := strings.TrimPrefix(strings.ToUpper(strings.TrimSpace(n)), "CAP_")
		switch {
		case c == "ALL":
			for _, a := range allCaps {
				out[a] = true
			}
		case slices.Contains(allCaps, c):
			out[c] = true
		default:
			unknown = append(unknown, n)
		}
	}
	if len(unknown) > 0 {
		return nil, fmt.Errorf("unknown capabilities %q", unknown)
	}
	return out, nil
}

func (s capSet) sorted() []string {
	var out []string
	for _, c := range allCaps {
		if s[c] {
			out = append(out, c)
		}
	}
	return out
}

// capDelta returns the CapAdd and CapDrop that give a task the capabilities
// it may have: Docker's defaults that allow_caps allows, less cap_drop,
// plus cap_add. A cap_add outside allow_caps is an error naming the option
// that allows it (as Nomad's driver).
func capDelta(allowCaps, capAdd, capDrop []string) (add, drop []string, err error) {
	allowed, err := parseCaps(allowCaps)
	if err != nil {
		return nil, nil, fmt.Errorf("the docker plugin's allow_caps: %w", err)
	}
	want, err := parseCaps(capAdd)
	if err != nil {
		return nil, nil, fmt.Errorf("cap_add: %w", err)
	}
	dropSet, err := parseCaps(capDrop)
	if err != nil {
		return nil, nil, fmt.Errorf("cap_drop: %w", err)
	}
	var denied []string
	for _, c := range want.sorted() {
		if !allowed[c] {
			denied = append(denied, strings.ToLower(c))
		}
	}
	if len(denied) > 0 {
		return nil, nil, fmt.Errorf("cap_add %q: not allowed by the docker plugin's allow_caps; an operator can add them there", denied)
	}
	// As Docker applies them: drops first, then adds.
	effective := capSet{}
	for _, c := range dockerDefaultCaps {
		if allowed[c] && !dropSet[c] {
			effective[c] = true
		}
	}
	for c := range want {
		effective[c] = true
	}
	defaults := capSet{}
	for _, c := range dockerDefaultCaps {
		defaults[c] = true
	}
	for _, c := range allCaps {
		switch {
		case effective[c] && !defaults[c]:
			add = append(add, c)
		case !effective[c] && defaults[c]:
			drop = append(drop, c)
		}
	}
	return add, drop, nil
}
