package structs

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// MaxPathNameLength is the longest name (in bytes) allowed for what
// becomes a file or directory name on the nodes: a group, a task, a
// volume. A task's log files are "<task>.stdout.<n>", and file names are
// at most 255 bytes.
const MaxPathNameLength = 128

// ReservedTaskName is the one task name that collides with an alloc
// directory's own entries: "alloc", the directory the group's tasks share.
// Names starting with "." are reserved too (Drover keeps its own state in
// dot-directories of the alloc dir).
const ReservedTaskName = "alloc"

// ValidatePathName checks a name that becomes one file or directory name
// on the nodes (a task's directory, a volume's mount point): it must not
// be "." or "..", nor contain "/", a NUL or another control character,
// nor be invalid UTF-8, nor be longer than MaxPathNameLength. field says
// what the name is ("task name") in the error. An empty name is not
// checked here: whether one is allowed is the caller's business.
func ValidatePathName(field, name string) error {
	switch {
	case name == "":
		return nil
	case name == "." || name == "..":
		return fmt.Errorf("%s %q is not allowed: it becomes a directory name on the client, where %q means another directory; pick another name", field, name, name)
	case strings.Contains(name, "/"):
		return fmt.Errorf("%s %q contains \"/\": it becomes a directory name on the client; use \"-\" or \"_\" instead", field, name)
	case len(name) > MaxPathNameLength:
		return fmt.Errorf("%s %.32q... is %d bytes long: at most %d are allowed", field, name, len(name), MaxPathNameLength)
	}
	return checkCharacters(field, name)
}

// checkCharacters refuses invalid UTF-8, control characters (NUL
// included) and bidirectional formatting characters, which would make a
// name print as another.
func checkCharacters(field, name string) error {
	if !utf8.ValidString(name) {
		return fmt.Errorf("%s %q is not valid UTF-8: use printable characters", field, name)
	}
	for _, r := range name {
		switch {
		case r == 0:
			return fmt.Errorf("%s %q contains a null character: remove it", field, name)
		case unicode.IsControl(r), unicode.Is(unicode.Bidi_Control, r):
			return fmt.Errorf("%s %q contains the control character %U: use printable characters", field, name, r)
		}
	}
	return nil
}

// validateTaskName is ValidatePathName for a task, whose directory also
// must not take the place of the alloc dir's own entries.
func validateTaskName(name string) error {
	if err := ValidatePathName("task name", name); err != nil {
		return err
	}
	if name == ReservedTaskName || strings.HasPrefix(name, ".") {
		return fmt.Errorf("task name %q is reserved: %q is the directory a group's tasks share and names starting with \".\" are Drover's own; rename the task", name, ReservedTaskName)
	}
	return nil
}

// validateJobID checks a job ID as Nomad does (no space, no null
// character), and refuses what breaks its use in URLs and terminals:
// invalid UTF-8, "." and "..", and the characters that take over a
// terminal or make text display as other text (ESC and the C1 controls,
// which start terminal control sequences, and the bidirectional
// formatting characters). Other control characters are allowed, as Nomad
// allows them (its API test suite registers an ID with a newline); they
// never become a path. A "/" is allowed: periodic and dispatched jobs' IDs
// hold one.
func validateJobID(id string) error {
	switch {
	case id == "":
		return nil
	case strings.Contains(id, " "):
		return fmt.Errorf("job ID %q contains a space: use \"-\" or \"_\" instead", id)
	case id == "." || id == "..":
		return fmt.Errorf("job ID %q is not allowed: it would name another path in the HTTP API; pick another ID", id)
	case !utf8.ValidString(id):
		return fmt.Errorf("job ID %q is not valid UTF-8: use printable characters", id)
	}
	for _, r := range id {
		switch {
		case r == 0:
			return fmt.Errorf("job ID %q contains a null character: remove it", id)
		case r == 0x1b, r >= 0x80 && r <= 0x9f, unicode.Is(unicode.Bidi_Control, r):
			return fmt.Errorf("job ID %q contains the control character %U, which takes over terminals that print the ID: use printable characters", id, r)
		}
	}
	return nil
}

// nameErrors returns the problems of every name in the job that ends up in
// a path, a URL or a terminal: the job's ID and name, its groups' and its
// tasks' names. Empty names are left to Validate's other checks.
func (j *Job) nameErrors() []error {
	var errs []error
	if err := validateJobID(j.ID); err != nil {
		errs = append(errs, err)
	}
	if j.Name != "" {
		if err := checkCharacters("job name", j.Name); err != nil {
			errs = append(errs, err)
		}
	}
	for _, tg := range j.TaskGroups {
		if err := ValidatePathName("group name", tg.Name); err != nil {
			errs = append(errs, err)
		}
		for _, t := range tg.Tasks {
			if t.Name == "" {
				continue
			}
			if err := validateTaskName(t.Name); err != nil {
				errs = append(errs, fmt.Errorf("group %q: %w", tg.Name, err))
			}
		}
	}
	return errs
}
