package grpcdriver

import (
	"context"
	"errors"
	"fmt"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/drover-io/drover/plugins/drivers"
	"github.com/drover-io/drover/plugins/drivers/proto"
)

// toStatus turns a driver's error into a gRPC status whose code and
// details keep the error's kind.
func toStatus(err error) error {
	if err == nil {
		return nil
	}
	code := codes.Unknown
	detail := &proto.ErrorDetail{}
	switch {
	case errors.Is(err, drivers.ErrTaskNotFound):
		code, detail.Kind = codes.NotFound, proto.ErrorDetail_KIND_TASK_NOT_FOUND
	case errors.Is(err, drivers.ErrNotSupported):
		code, detail.Kind = codes.Unimplemented, proto.ErrorDetail_KIND_NOT_SUPPORTED
	case errors.Is(err, context.Canceled):
		code = codes.Canceled
	case errors.Is(err, context.DeadlineExceeded):
		code = codes.DeadlineExceeded
	}
	var re *drivers.RecoverableError
	if errors.As(err, &re) {
		detail.Recoverable = &re.Recoverable
	}
	st := status.New(code, err.Error())
	if withDetail, derr := st.WithDetails(detail); derr == nil {
		st = withDetail
	}
	return st.Err()
}

// remoteError is an error that came from the plugin: its message, and the
// kind it had there (nil: none we know).
type remoteError struct {
	msg  string
	kind error
}

func (e *remoteError) Error() string { return e.msg }
func (e *remoteError) Unwrap() error { return e.kind }

// fromStatus turns an error from a gRPC call back into a driver error of
// the same kind; an error of the transport rather than the driver is
// wrapped with op ("start task").
func fromStatus(op string, err error) error {
	if err == nil {
		return nil
	}
	st, ok := status.FromError(err)
	if !ok {
		return fmt.Errorf("%s: %w", op, err)
	}
	var detail *proto.ErrorDetail
	for _, d := range st.Details() {
		if ed, ok := d.(*proto.ErrorDetail); ok {
			detail = ed
		}
	}
	re := &remoteError{msg: st.Message()}
	switch {
	case detail.GetKind() == proto.ErrorDetail_KIND_TASK_NOT_FOUND:
		re.kind = drivers.ErrTaskNotFound
	case detail.GetKind() == proto.ErrorDetail_KIND_NOT_SUPPORTED, st.Code() == codes.Unimplemented:
		re.kind = drivers.ErrNotSupported
	case st.Code() == codes.Canceled:
		re.kind = context.Canceled
	case st.Code() == codes.DeadlineExceeded:
		re.kind = context.DeadlineExceeded
	case detail == nil && st.Code() == codes.Unavailable:
		// The transport's own failure: the plugin process is gone.
		re.kind = drivers.ErrPluginUnavailable
		re.msg = fmt.Sprintf("%v: %s", drivers.ErrPluginUnavailable, st.Message())
	}
	var out error = re
	if detail != nil && detail.Recoverable != nil {
		out = &drivers.RecoverableError{Err: re, Recoverable: detail.GetRecoverable()}
	}
	if detail == nil {
		// Not the driver's error but the transport's: say which call.
		return fmt.Errorf("%s: %w", op, out)
	}
	return out
}
