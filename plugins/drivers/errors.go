package drivers

import "errors"

// RecoverableError wraps an error from a driver with whether retrying the
// operation (restarting the task) may succeed. The client restarts a task
// whose StartTask failed with a recoverable error and fails it otherwise.
type RecoverableError struct {
	Err         error
	Recoverable bool
}

// NewRecoverableError wraps err, marking whether it is recoverable. It
// returns nil for a nil err.
func NewRecoverableError(err error, recoverable bool) error {
	if err == nil {
		return nil
	}
	return &RecoverableError{Err: err, Recoverable: recoverable}
}

// Error returns the wrapped error's message.
func (e *RecoverableError) Error() string { return e.Err.Error() }

// Unwrap returns the wrapped error.
func (e *RecoverableError) Unwrap() error { return e.Err }

// IsRecoverable reports whether err, or an error it wraps, is a
// RecoverableError marked recoverable.
func IsRecoverable(err error) bool {
	var re *RecoverableError
	return errors.As(err, &re) && re.Recoverable
}
