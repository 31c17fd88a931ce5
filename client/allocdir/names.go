package allocdir

import (
	"fmt"
	"strings"
)

// MaxNameLength is the longest task name (in bytes) that can be a
// directory: its log files "<task>.stdout.<n>" must fit a file name (255
// bytes on Linux).
const MaxNameLength = 200

// checkName returns an error when name cannot be one directory name
// beneath the alloc root: empty, "." or "..", with a "/" or a NUL byte, or
// longer than MaxNameLength. what names the name in the error.
func checkName(what, name string) error {
	switch {
	case name == "":
		return fmt.Errorf("%s is empty", what)
	case name == "." || name == "..":
		return fmt.Errorf("%s %q cannot be a directory name", what, name)
	case strings.ContainsAny(name, "/\x00"):
		return fmt.Errorf("%s %q cannot be a directory name: it holds a \"/\" or a NUL byte", what, name)
	case len(name) > MaxNameLength:
		return fmt.Errorf("%s %.40q... is %d bytes long: at most %d can be a directory name", what, name, len(name), MaxNameLength)
	}
	return nil
}

// checkTaskName is checkName for a task, whose directory also must not
// take the place of the shared alloc/ directory or of Drover's own
// directories (Internal).
func checkTaskName(name string) error {
	if err := checkName("task name", name); err != nil {
		return err
	}
	if name == SharedAllocName || Internal(name) {
		return fmt.Errorf("task name %q cannot be a directory name: it is reserved for the allocation's own directories", name)
	}
	return nil
}

// Internal reports whether name, an entry at the top of an alloc
// directory or in a task's directory, is Drover's own (the shims' state in
// ".shims", the docker driver's ".docker-logs.pos"): every such entry
// starts with ".". No task directory may be named so, and the alloc fs API
// hides them (but not the tasks' own dot-files in alloc/, local/, ...).
func Internal(name string) bool {
	return strings.HasPrefix(name, ".")
}
