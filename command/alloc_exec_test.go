package command

import (
	"io"
	"strings"
	"testing"
	"testing/iotest"
)

func TestEscapeReader(t *testing.T) {
	cases := []struct {
		name, in, want string
		detached       bool
	}{
		{"plain", "ls\r", "ls\r", false},
		{"detach at start", "~.", "", true},
		{"detach after a line", "echo\r~.more", "echo\r", true},
		{"not at a line's start", "a~.b", "a~.b", false},
		{"doubled", "~~x", "~x", false},
		{"other key", "~x", "~x", false},
		{"escape split across reads", "\r~", "\r", false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			detached := false
			e := &escapeReader{r: iotest.OneByteReader(strings.NewReader(tc.in)), escape: '~', detach: func() { detached = true }, lineStart: true}
			got, err := io.ReadAll(e)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tc.want || detached != tc.detached {
				t.Fatalf("read %q detached %v, want %q %v", got, detached, tc.want, tc.detached)
			}
		})
	}
}

func TestParseEscape(t *testing.T) {
	for in, want := range map[string]byte{"~": '~', "^": '^', "none": 0} {
		if got, err := parseEscape(in); err != nil || got != want {
			t.Errorf("parseEscape(%q) = %q, %v", in, got, err)
		}
	}
	if _, err := parseEscape("ab"); err == nil {
		t.Error("two characters accepted")
	}
}
