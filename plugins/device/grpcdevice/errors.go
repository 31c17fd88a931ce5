package grpcdevice

import (
	"context"
	"errors"
	"fmt"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/drover-io/drover/plugins/device"
	"github.com/drover-io/drover/plugins/device/proto"
)

// toStatus turns a plugin's error into a gRPC status whose code and details
// keep the error's kind.
func toStatus(err error) error {
	if err == nil {
		return nil
	}
	code := codes.Unknown
	detail := &proto.ErrorDetail{}
	switch {
	case errors.Is(err, device.ErrUnknownDevice):
		code, detail.Kind = codes.NotFound, proto.ErrorDetail_KIND_UNKNOWN_DEVICE
	case errors.Is(err, context.Canceled):
		code = codes.Canceled
	case errors.Is(err, context.DeadlineExceeded):
		code = codes.DeadlineExceeded
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

// fromStatus turns an error from a gRPC call back into an error of the same
// kind; an error of the transport rather than the plugin is wrapped with op
// ("reserve").
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
	case detail.GetKind() == proto.ErrorDetail_KIND_UNKNOWN_DEVICE:
		re.kind = device.ErrUnknownDevice
	case st.Code() == codes.Canceled:
		re.kind = context.Canceled
	case st.Code() == codes.DeadlineExceeded:
		re.kind = context.DeadlineExceeded
	case detail == nil && st.Code() == codes.Unavailable:
		re.kind = device.ErrPluginUnavailable
		re.msg = fmt.Sprintf("%v: %s", device.ErrPluginUnavailable, st.Message())
	}
	if detail == nil {
		return fmt.Errorf("%s: %w", op, re)
	}
	return re
}
