package grpcbase

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/wrapperspb"
)

// The tests stand in a StringValue for a transport's ErrorDetail: its value
// names the error's kind.

var (
	errFake        = errors.New("fake kind")
	errUnavailable = errors.New("plugin unavailable")
)

func testToStatus(err error) error {
	code, detail := codes.Unknown, &wrapperspb.StringValue{}
	if errors.Is(err, errFake) {
		code, detail.Value = codes.NotFound, "fake"
	}
	return ToStatus(err, code, detail)
}

func testKinds() StatusKinds[*wrapperspb.StringValue] {
	return StatusKinds[*wrapperspb.StringValue]{
		Unavailable: errUnavailable,
		Kind: func(_ codes.Code, d *wrapperspb.StringValue) error {
			if d.GetValue() == "fake" {
				return errFake
			}
			return nil
		},
	}
}

func TestStatus_RoundTrip(t *testing.T) {
	cases := []struct {
		name     string
		err      error
		wantCode codes.Code
		wantKind error
	}{
		{"plain", errors.New("boom"), codes.Unknown, nil},
		{"transport kind", fmt.Errorf("x: %w", errFake), codes.NotFound, errFake},
		{"canceled", fmt.Errorf("x: %w", context.Canceled), codes.Canceled, context.Canceled},
		{"deadline", fmt.Errorf("x: %w", context.DeadlineExceeded), codes.DeadlineExceeded, context.DeadlineExceeded},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			st := testToStatus(tc.err)
			if got := status.Code(st); got != tc.wantCode {
				t.Fatalf("code = %v, want %v", got, tc.wantCode)
			}
			back := FromStatus("op", st, testKinds())
			if back.Error() != tc.err.Error() {
				t.Fatalf("message = %q, want %q (no op prefix for the plugin's error)", back, tc.err)
			}
			if tc.wantKind != nil && !errors.Is(back, tc.wantKind) {
				t.Fatalf("%v is not %v", back, tc.wantKind)
			}
		})
	}
}

func TestFromStatus_TransportErrors(t *testing.T) {
	if FromStatus("op", nil, testKinds()) != nil || ToStatus(nil, codes.Unknown, &wrapperspb.StringValue{}) != nil {
		t.Fatal("nil error must stay nil")
	}
	gone := FromStatus("start task", status.Error(codes.Unavailable, "conn refused"), testKinds())
	if !errors.Is(gone, errUnavailable) || !strings.HasPrefix(gone.Error(), "start task: plugin unavailable: conn refused") {
		t.Fatalf("unavailable: %v", gone)
	}
	plain := FromStatus("stats", errors.New("not a status"), testKinds())
	if plain.Error() != "stats: not a status" {
		t.Fatalf("non-status error: %v", plain)
	}
}
