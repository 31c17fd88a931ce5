package grpcdriver

import (
	"errors"

	"google.golang.org/grpc/codes"

	"github.com/drover-io/drover/plugins/base/grpcbase"
	"github.com/drover-io/drover/plugins/drivers"
	"github.com/drover-io/drover/plugins/drivers/proto"
)

// The driver's error kinds on the wire: grpcbase maps the context's errors
// and the transport's own failure; this file adds the driver's kinds
// (ErrTaskNotFound, ErrNotSupported) and RecoverableError, which rides in
// the detail's recoverable field.

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
	}
	var re *drivers.RecoverableError
	if errors.As(err, &re) {
		detail.Recoverable = &re.Recoverable
	}
	return grpcbase.ToStatus(err, code, detail)
}

// statusKinds restores the driver's error kinds in fromStatus.
func statusKinds() grpcbase.StatusKinds[*proto.ErrorDetail] {
	return grpcbase.StatusKinds[*proto.ErrorDetail]{
		Unavailable: drivers.ErrPluginUnavailable,
		Kind: func(code codes.Code, detail *proto.ErrorDetail) error {
			switch {
			case detail.GetKind() == proto.ErrorDetail_KIND_TASK_NOT_FOUND:
				return drivers.ErrTaskNotFound
			case detail.GetKind() == proto.ErrorDetail_KIND_NOT_SUPPORTED, code == codes.Unimplemented:
				return drivers.ErrNotSupported
			}
			return nil
		},
		Wrap: func(err error, detail *proto.ErrorDetail) error {
			if detail.Recoverable == nil {
				return err
			}
			return &drivers.RecoverableError{Err: err, Recoverable: detail.GetRecoverable()}
		},
	}
}

// fromStatus turns an error from a gRPC call back into a driver error of
// the same kind; an error of the transport rather than the driver is
// wrapped with op ("start task").
func fromStatus(op string, err error) error {
	return grpcbase.FromStatus(op, err, statusKinds())
}
