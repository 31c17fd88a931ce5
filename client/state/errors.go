package state

import (
	"errors"
	"fmt"

	berrors "go.etcd.io/bbolt/errors"
)

// Errors that opening a state file can wrap; test with errors.Is. The
// error's text names the file and says what to do.
var (
	// ErrLocked means another process (another agent with the same
	// data_dir) holds the state file.
	ErrLocked = errors.New("state file is locked by another process")
	// ErrCorrupt means the state file is not a readable drover state
	// database. The file was left as it was.
	ErrCorrupt = errors.New("state file is corrupt")
	// ErrSchemaTooNew means the state file was written by a newer drover.
	ErrSchemaTooNew = errors.New("state file schema is newer than supported")
)

// MoveAsideFlag is the name (without its dash) of the `drover agent` flag
// that moves an unusable state file aside with MoveAside.
const MoveAsideFlag = "state-move-aside"

// fileError is an error about the state file: its text is complete, and it
// wraps both its kind (ErrLocked, ...) and its cause.
type fileError struct {
	kind  error
	cause error
	msg   string
}

func (e *fileError) Error() string   { return e.msg }
func (e *fileError) Unwrap() []error { return []error{e.kind, e.cause} }

func lockedError(path string, cause error) error {
	return &fileError{kind: ErrLocked, cause: cause, msg: fmt.Sprintf(
		"state file %s is locked by another process: is another drover agent running with the same data_dir?", path)}
}

// moveAsideAdvice ends the corrupt and too-new errors.
func moveAsideAdvice() string {
	return "move the file aside with `drover agent -" + MoveAsideFlag + "` plus the agent's usual " +
		"-config/-data-dir flags (the agent then starts with empty local state as a new node, " +
		"and stops the tasks left running, which it cannot re-attach to)"
}

func corruptError(path string, cause error) error {
	return &fileError{kind: ErrCorrupt, cause: cause, msg: fmt.Sprintf(
		"state file %s is corrupt: %v; it was left untouched: restore it from a backup, or %s",
		path, cause, moveAsideAdvice())}
}

func tooNewError(path string, version int) error {
	return &fileError{kind: ErrSchemaTooNew, msg: fmt.Sprintf(
		"state file %s has schema version %d, newer than version %d supported by this drover: "+
			"downgrade is not supported: upgrade drover, or %s",
		path, version, SchemaVersion, moveAsideAdvice())}
}

// classifyOpenError turns an error from opening a bbolt file into one of
// the errors above where it is one.
func classifyOpenError(path string, err error) error {
	switch {
	case errors.Is(err, berrors.ErrTimeout):
		return lockedError(path, err)
	case errors.Is(err, berrors.ErrInvalid), errors.Is(err, berrors.ErrVersionMismatch),
		errors.Is(err, berrors.ErrChecksum), errors.Is(err, berrors.ErrInvalidMapping):
		return corruptError(path, err)
	}
	return fmt.Errorf("open state file %s: %w", path, err)
}
