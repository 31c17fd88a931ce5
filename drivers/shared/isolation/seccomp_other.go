//go:build !amd64 && !arm64

package isolation

// No default seccomp filter is defined for this machine's ABI: tasks get
// no_new_privs and dropped capabilities only.
const (
	auditArch = 0
	x32Bit    = 0
)
