package structs

import (
	"errors"
	"fmt"
)

// ErrorKind classifies an error so that transports (HTTP, RPC, CLI) map it to
// a status code in one place.
type ErrorKind int

const (
	// KindInternal is an unexpected failure: HTTP 500.
	KindInternal ErrorKind = iota
	// KindInvalid is bad input from the caller: HTTP 400.
	KindInvalid
	// KindNotFound is a missing object: HTTP 404.
	KindNotFound
	// KindConflict is a request that conflicts with current state: HTTP 409.
	KindConflict
	// KindUnavailable is a temporary condition (no leader, shutting down): HTTP 503.
	KindUnavailable
	// KindPermission is a caller that may not do what it asked (a node
	// call with a missing or wrong secret): HTTP 403.
	KindPermission
)

// String returns the kind's name.
func (k ErrorKind) String() string {
	switch k {
	case KindInvalid:
		return "invalid"
	case KindNotFound:
		return "not found"
	case KindConflict:
		return "conflict"
	case KindUnavailable:
		return "unavailable"
	case KindPermission:
		return "permission denied"
	default:
		return "internal"
	}
}

// HTTPStatus is the HTTP status code of the kind: the one mapping used by
// the HTTP API and the RPC transport alike.
func (k ErrorKind) HTTPStatus() int {
	switch k {
	case KindInvalid:
		return 400 // Bad Request
	case KindNotFound:
		return 404 // Not Found
	case KindConflict:
		return 409 // Conflict
	case KindUnavailable:
		return 503 // Service Unavailable
	case KindPermission:
		return 403 // Forbidden
	default:
		return 500 // Internal Server Error
	}
}

// KindError is an error carrying an ErrorKind. Wrap it with fmt.Errorf("...: %w")
// freely: KindOf finds it through the chain.
type KindError struct {
	Kind ErrorKind
	Msg  string
}

// Error returns the message.
func (e *KindError) Error() string { return e.Msg }

// NewError returns an error of the given kind with a formatted message.
func NewError(kind ErrorKind, format string, args ...any) error {
	return &KindError{Kind: kind, Msg: fmt.Sprintf(format, args...)}
}

// NotFound returns a KindNotFound error such as `job "web" not found`.
func NotFound(what, id string) error {
	return &KindError{Kind: KindNotFound, Msg: fmt.Sprintf("%s %q not found", what, id)}
}

// Invalid returns a KindInvalid error with a formatted message.
func Invalid(format string, args ...any) error {
	return NewError(KindInvalid, format, args...)
}

// KindOf returns the kind of err: the kind of the first KindError in its chain,
// or KindInternal.
func KindOf(err error) ErrorKind {
	var ke *KindError
	if errors.As(err, &ke) {
		return ke.Kind
	}
	return KindInternal
}
