package drivers

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"syscall"
)

// signalsByName maps the names of the signals a task may be sent, without
// the "SIG" prefix, to their numbers.
var signalsByName = map[string]syscall.Signal{
	"ABRT":   syscall.SIGABRT,
	"ALRM":   syscall.SIGALRM,
	"BUS":    syscall.SIGBUS,
	"CHLD":   syscall.SIGCHLD,
	"CONT":   syscall.SIGCONT,
	"FPE":    syscall.SIGFPE,
	"HUP":    syscall.SIGHUP,
	"ILL":    syscall.SIGILL,
	"INT":    syscall.SIGINT,
	"IO":     syscall.SIGIO,
	"KILL":   syscall.SIGKILL,
	"PIPE":   syscall.SIGPIPE,
	"PROF":   syscall.SIGPROF,
	"QUIT":   syscall.SIGQUIT,
	"SEGV":   syscall.SIGSEGV,
	"STOP":   syscall.SIGSTOP,
	"SYS":    syscall.SIGSYS,
	"TERM":   syscall.SIGTERM,
	"TRAP":   syscall.SIGTRAP,
	"TSTP":   syscall.SIGTSTP,
	"TTIN":   syscall.SIGTTIN,
	"TTOU":   syscall.SIGTTOU,
	"URG":    syscall.SIGURG,
	"USR1":   syscall.SIGUSR1,
	"USR2":   syscall.SIGUSR2,
	"VTALRM": syscall.SIGVTALRM,
	"WINCH":  syscall.SIGWINCH,
	"XCPU":   syscall.SIGXCPU,
	"XFSZ":   syscall.SIGXFSZ,
}

// ParseSignal returns the signal named by s: "SIGHUP", "HUP" (any case) or
// a number ("1").
func ParseSignal(s string) (syscall.Signal, error) {
	name := strings.ToUpper(strings.TrimSpace(s))
	if n, err := strconv.Atoi(name); err == nil {
		if n <= 0 || n > 64 {
			return 0, fmt.Errorf("invalid signal %q: number out of range", s)
		}
		return syscall.Signal(n), nil
	}
	if sig, ok := signalsByName[strings.TrimPrefix(name, "SIG")]; ok {
		return sig, nil
	}
	return 0, fmt.Errorf("unknown signal %q: use a name such as SIGINT or SIGHUP", s)
}

// SignalNames returns the names of the signals a task may be sent
// ("SIGHUP", ...), sorted; the client reports them as os.signals.
func SignalNames() []string {
	names := make([]string, 0, len(signalsByName))
	for n := range signalsByName {
		names = append(names, "SIG"+n)
	}
	slices.Sort(names)
	return names
}
