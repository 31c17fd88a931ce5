package api

import (
	"errors"
	"fmt"
	"net/http"
)

// UnexpectedResponseError is returned when the agent answers with a status
// other than 200. Message is the agent's explanation (the response body).
type UnexpectedResponseError struct {
	Method     string
	Path       string
	StatusCode int
	Message    string
}

// Error implements error.
func (e *UnexpectedResponseError) Error() string {
	if e.Message == "" {
		return fmt.Sprintf("Unexpected response code: %d (%s)", e.StatusCode, http.StatusText(e.StatusCode))
	}
	return fmt.Sprintf("Unexpected response code: %d (%s)", e.StatusCode, e.Message)
}

// ConnectError is returned when the agent cannot be reached at all.
type ConnectError struct {
	Address string
	Err     error
}

// Error implements error.
func (e *ConnectError) Error() string {
	return fmt.Sprintf("cannot reach the agent at %s: %v", e.Address, e.Err)
}

// Unwrap returns the transport's error.
func (e *ConnectError) Unwrap() error { return e.Err }

// IsNotFound reports whether err is the agent saying that what was asked for
// does not exist (HTTP 404).
func IsNotFound(err error) bool {
	var ue *UnexpectedResponseError
	return errors.As(err, &ue) && ue.StatusCode == http.StatusNotFound
}

// ErrorMessage returns the agent's own message for err when it is an
// *UnexpectedResponseError with one, and err's text otherwise.
func ErrorMessage(err error) string {
	var ue *UnexpectedResponseError
	if errors.As(err, &ue) && ue.Message != "" {
		return ue.Message
	}
	return err.Error()
}
