package docker

import (
	"bytes"
	"encoding/binary"
	"strings"
	"testing"
)

// frame returns one multiplexed frame of kind carrying p.
func frame(kind byte, p string) []byte {
	hdr := make([]byte, 8, 8+len(p))
	hdr[0] = kind
	binary.BigEndian.PutUint32(hdr[4:], uint32(len(p)))
	return append(hdr, p...)
}

func TestDemux(t *testing.T) {
	join := func(fs ...[]byte) []byte { return bytes.Join(fs, nil) }
	cases := []struct {
		name       string
		in         []byte
		out, err   string
		wantErrSub string
	}{
		{"empty", nil, "", "", ""},
		{"both streams", join(frame(1, "a\n"), frame(2, "b\n"), frame(1, "c")), "a\nc", "b\n", ""},
		{"empty frame", join(frame(1, ""), frame(1, "x")), "x", "", ""},
		{"large frame", frame(2, strings.Repeat("z", 100<<10)), "", strings.Repeat("z", 100<<10), ""},
		{"system frame is an error", join(frame(1, "a"), frame(3, "exec failed")), "a", "", "exec failed"},
		{"unknown kind", frame(9, "x"), "", "", "unknown stream kind 9"},
		{"truncated header", []byte{1, 0, 0}, "", "", "header"},
		{"truncated body", frame(1, "abc")[:10], "", "", "frame"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var out, errb bytes.Buffer
			err := demux(&out, &errb, bytes.NewReader(tc.in))
			if tc.wantErrSub == "" && err != nil {
				t.Fatalf("demux: %v", err)
			}
			if tc.wantErrSub != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErrSub)) {
				t.Fatalf("err = %v, want it to mention %q", err, tc.wantErrSub)
			}
			if tc.wantErrSub == "" && (out.String() != tc.out || errb.String() != tc.err) {
				t.Fatalf("stdout %q stderr %q, want %q %q", out.String(), errb.String(), tc.out, tc.err)
			}
		})
	}
}
