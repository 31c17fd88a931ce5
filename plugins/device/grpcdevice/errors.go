package grpcdevice

import (
	"errors"

	"google.golang.org/grpc/codes"

	"github.com/drover-io/drover/plugins/base/grpcbase"
	"github.com/drover-io/drover/plugins/device"
	"github.com/drover-io/drover/plugins/device/proto"
)

// The device plugin's error kinds on the wire: grpcbase maps the context's
// errors and the transport's own failure; this file adds
// device.ErrUnknownDevice.

// toStatus turns a plugin's error into a gRPC status whose code and details
// keep the error's kind.
func toStatus(err error) error {
	if err == nil {
		return nil
	}
	code := codes.Unknown
	detail := &proto.ErrorDetail{}
	if errors.Is(err, device.ErrUnknownDevice) {
		code, detail.Kind = codes.NotFound, proto.ErrorDetail_KIND_UNKNOWN_DEVICE
	}
	return grpcbase.ToStatus(err, code, detail)
}

// statusKinds restores the device plugin's error kinds in fromStatus.
func statusKinds() grpcbase.StatusKinds[*proto.ErrorDetail] {
	return grpcbase.StatusKinds[*proto.ErrorDetail]{
		Unavailable: device.ErrPluginUnavailable,
		Kind: func(_ codes.Code, detail *proto.ErrorDetail) error {
			if detail.GetKind() == proto.ErrorDetail_KIND_UNKNOWN_DEVICE {
				return device.ErrUnknownDevice
			}
			return nil
		},
	}
}

// fromStatus turns an error from a gRPC call back into an error of the same
// kind; an error of the transport rather than the plugin is wrapped with op
// ("reserve").
func fromStatus(op string, err error) error {
	return grpcbase.FromStatus(op, err, statusKinds())
}
