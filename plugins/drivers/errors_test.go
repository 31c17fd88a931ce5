package drivers

import (
	"errors"
	"fmt"
	"testing"
)

func TestIsRecoverable(t *testing.T) {
	base := errors.New("boom")
	cases := []struct {
		name string
		err  error
		want bool
	}{
		{"nil", nil, false},
		{"plain", base, false},
		{"recoverable", NewRecoverableError(base, true), true},
		{"unrecoverable", NewRecoverableError(base, false), false},
		{"wrapped recoverable", fmt.Errorf("start: %w", NewRecoverableError(base, true)), true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := IsRecoverable(tc.err); got != tc.want {
				t.Fatalf("IsRecoverable = %v, want %v", got, tc.want)
			}
		})
	}
	if NewRecoverableError(nil, true) != nil {
		t.Fatal("NewRecoverableError(nil) must be nil")
	}
	if err := NewRecoverableError(base, true); !errors.Is(err, base) || err.Error() != "boom" {
		t.Fatalf("wrapping lost the error: %v", err)
	}
}
