package docker

import (
	"bytes"
	"testing"
	"time"
)

func TestLogCopierResume(t *testing.T) {
	t1 := "2026-01-01T00:00:01.000000001Z"
	t2 := "2026-01-01T00:00:02Z"
	var out, errb bytes.Buffer
	lc := &logCopier{stdout: &out, stderr: &errb}
	read := func(frames ...[2]string) {
		t.Helper()
		for _, f := range frames {
			kind := byte(streamStdout)
			if f[0] == "err" {
				kind = streamStderr
			}
			if err := lc.frame(kind, []byte(f[1])); err != nil {
				t.Fatal(err)
			}
		}
		lc.resume()
	}
	// First read: two messages share t2.
	read([2]string{"out", t1 + " a\n"}, [2]string{"err", t2 + " b\n"}, [2]string{"out", t2 + " c\n"})
	if want, _ := time.Parse(time.RFC3339Nano, t2); !lc.last.Equal(want) || lc.atLast != 2 {
		t.Fatalf("last = %v, atLast = %d", lc.last, lc.atLast)
	}
	// A read resumed from t2 sees both again, then new ones.
	read([2]string{"err", t2 + " b\n"}, [2]string{"out", t2 + " c\n"}, [2]string{"out", t2 + " d\n"}, [2]string{"out", "2026-01-01T00:00:03Z e\n"})
	// And a read with nothing new.
	read([2]string{"out", "2026-01-01T00:00:03Z e\n"})
	if out.String() != "a\nc\nd\ne\n" || errb.String() != "b\n" {
		t.Fatalf("stdout %q stderr %q", out.String(), errb.String())
	}
	// A message without a timestamp is copied as is.
	read([2]string{"out", "no-timestamp\n"})
	if out.String() != "a\nc\nd\ne\nno-timestamp\n" {
		t.Fatalf("stdout %q", out.String())
	}
}

func TestSplitTimestamp(t *testing.T) {
	cases := []struct {
		in, text string
		ok       bool
	}{
		{"2026-01-01T00:00:01.5Z hello world\n", "hello world\n", true},
		{"2026-01-01T00:00:01Z ", "", true},
		{"hello world", "hello world", false},
		{" x", " x", false},
		{"", "", false},
	}
	for _, tc := range cases {
		_, text, ok := splitTimestamp([]byte(tc.in))
		if string(text) != tc.text || ok != tc.ok {
			t.Errorf("splitTimestamp(%q) = %q, %v; want %q, %v", tc.in, text, ok, tc.text, tc.ok)
		}
	}
}
