package rawexec

import (
	"os"
	"testing"
)

func TestParseProcStat(t *testing.T) {
	cases := []struct {
		name    string
		in      string
		want    procStat
		wantErr bool
	}{
		{
			name: "plain",
			in:   "1234 (sleep) S 1 1234 1234 0 -1 4194304 100 0 0 0 7 3 0 0 20 0 1 0 98765 8192 200 18446744073709551615",
			want: procStat{State: 'S', Pgrp: 1234, Utime: 7, Stime: 3, StartTime: 98765},
		},
		{
			name: "odd command name",
			in:   "42 (a) (b c) R 1 40 40 0 -1 0 0 0 0 0 1 2 0 0 20 0 1 0 555 0 0 0",
			want: procStat{State: 'R', Pgrp: 40, Utime: 1, Stime: 2, StartTime: 555},
		},
		{name: "truncated", in: "42 (x) S 1 2 3", wantErr: true},
		{name: "no name", in: "garbage", wantErr: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := parseProcStat([]byte(tc.in))
			if (err != nil) != tc.wantErr {
				t.Fatalf("err = %v", err)
			}
			if err == nil && *got != tc.want {
				t.Fatalf("got %+v, want %+v", *got, tc.want)
			}
		})
	}
}

func TestProcSelf(t *testing.T) {
	st, err := readProcStat(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if !alive(os.Getpid(), st.StartTime) || alive(os.Getpid(), st.StartTime+1) {
		t.Fatal("alive disagrees with /proc")
	}
	if rss, err := readRSS(os.Getpid()); err != nil || rss == 0 {
		t.Fatalf("readRSS = %d, %v", rss, err)
	}
	if _, err := readProcStat(1 << 30); err != errNoProcess {
		t.Fatalf("missing pid err = %v", err)
	}
}
