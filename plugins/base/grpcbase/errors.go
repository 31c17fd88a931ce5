package grpcbase

import (
	"context"
	"errors"
	"fmt"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/protoadapt"
)

// ToStatus turns a plugin's error into a gRPC status error with code and
// the transport's detail message attached, so that the other side can
// restore the error's kind. The transport picks code and detail for its own
// kinds first; a code left at codes.Unknown is then refined for the
// context's errors (codes.Canceled, codes.DeadlineExceeded). A nil err is
// nil.
func ToStatus(err error, code codes.Code, detail protoadapt.MessageV1) error {
	if err == nil {
		return nil
	}
	if code == codes.Unknown {
		switch {
		case errors.Is(err, context.Canceled):
			code = codes.Canceled
		case errors.Is(err, context.DeadlineExceeded):
			code = codes.DeadlineExceeded
		}
	}
	st := status.New(code, err.Error())
	if withDetail, derr := st.WithDetails(detail); derr == nil {
		st = withDetail
	}
	return st.Err()
}

// RemoteError is an error that came from the plugin: its message, and the
// kind it had there (nil: none we know), which errors.Is finds.
type RemoteError struct {
	Msg  string
	Kind error
}

// Error returns the plugin's message.
func (e *RemoteError) Error() string { return e.Msg }

// Unwrap returns the error's kind.
func (e *RemoteError) Unwrap() error { return e.Kind }

// StatusKinds is what a transport adds to FromStatus: its own error kinds
// and how it tells that the plugin is gone. D is its ErrorDetail message.
type StatusKinds[D protoadapt.MessageV1] struct {
	// Unavailable is the kind of an error of the transport itself
	// (codes.Unavailable without a detail): the plugin process is gone.
	Unavailable error
	// Kind returns the kind for the status's code and the plugin's detail
	// (a nil D when the status has none), or nil to fall back to the
	// shared kinds. It is asked first.
	Kind func(code codes.Code, detail D) error
	// Wrap, when set, may wrap the plugin's error according to its
	// detail; it is called only when the status has one.
	Wrap func(err error, detail D) error
}

// connClosingMsg is gRPC's message for a call failed by the closing of its
// own connection (grpc.ErrClientConnClosing, with codes.Canceled; the
// grpcdriver tests pin it).
const connClosingMsg = "grpc: the client connection is closing"

// FromStatus turns an error from a gRPC call back into an error of the same
// kind (a *RemoteError unless kinds.Wrap wraps it). An error of the
// transport rather than the plugin (no detail, or not a status at all) is
// wrapped with op ("start task"). A nil err is nil.
func FromStatus[D protoadapt.MessageV1](op string, err error, kinds StatusKinds[D]) error {
	if err == nil {
		return nil
	}
	st, ok := status.FromError(err)
	if !ok {
		return fmt.Errorf("%s: %w", op, err)
	}
	var detail D
	found := false
	for _, d := range st.Details() {
		if ed, ok := d.(D); ok {
			detail, found = ed, true
		}
	}
	re := &RemoteError{Msg: st.Message()}
	if kinds.Kind != nil {
		re.Kind = kinds.Kind(st.Code(), detail)
	}
	if re.Kind == nil {
		switch {
		case !found && st.Code() == codes.Canceled && st.Message() == connClosingMsg:
			// The agent closed its connection to the plugin (having
			// found the process gone) before gRPC read the end of the
			// socket: the plugin is gone, the call was not cancelled.
			re.Kind = kinds.Unavailable
			re.Msg = fmt.Sprintf("%v: %s", kinds.Unavailable, st.Message())
		case st.Code() == codes.Canceled:
			re.Kind = context.Canceled
		case st.Code() == codes.DeadlineExceeded:
			re.Kind = context.DeadlineExceeded
		case !found && st.Code() == codes.Unavailable:
			re.Kind = kinds.Unavailable
			re.Msg = fmt.Sprintf("%v: %s", kinds.Unavailable, st.Message())
		}
	}
	var out error = re
	if found && kinds.Wrap != nil {
		out = kinds.Wrap(re, detail)
	}
	if !found {
		// Not the plugin's error but the transport's: say which call.
		return fmt.Errorf("%s: %w", op, out)
	}
	return out
}
