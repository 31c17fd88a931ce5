package drivers

import (
	"syscall"
	"testing"
)

func TestParseSignal(t *testing.T) {
	cases := []struct {
		in      string
		want    syscall.Signal
		wantErr bool
	}{
		{"SIGHUP", syscall.SIGHUP, false},
		{"HUP", syscall.SIGHUP, false},
		{"sigint", syscall.SIGINT, false},
		{" SIGTERM ", syscall.SIGTERM, false},
		{"9", syscall.SIGKILL, false},
		{"SIGUSR1", syscall.SIGUSR1, false},
		{"0", 0, true},
		{"100", 0, true},
		{"SIGNOPE", 0, true},
		{"", 0, true},
	}
	for _, tc := range cases {
		t.Run(tc.in, func(t *testing.T) {
			got, err := ParseSignal(tc.in)
			if (err != nil) != tc.wantErr {
				t.Fatalf("ParseSignal(%q) err = %v, wantErr %v", tc.in, err, tc.wantErr)
			}
			if got != tc.want {
				t.Fatalf("ParseSignal(%q) = %v, want %v", tc.in, got, tc.want)
			}
		})
	}
}
