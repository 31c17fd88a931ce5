package docker

import (
	"slices"
	"strings"
	"testing"
)

func TestCapDelta(t *testing.T) {
	cases := []struct {
		name             string
		allow, add, drop []string
		wantAdd          []string
		wantDrop         []string
		wantErr          string
	}{
		// Nomad's default allow_caps lacks NET_RAW: tasks lose it.
		{name: "defaults", allow: DefaultAllowCaps, wantDrop: []string{"NET_RAW"}},
		{name: "net_raw refused by default", allow: DefaultAllowCaps, add: []string{"net_raw"}, wantErr: `cap_add ["net_raw"]: not allowed by the docker plugin's allow_caps`},
		{name: "sys_admin refused by default", allow: DefaultAllowCaps, add: []string{"CAP_SYS_ADMIN", "chown"}, wantErr: `["sys_admin"]`},
		{name: "allowed add", allow: append(slices.Clone(DefaultAllowCaps), "net_raw", "sys_time"), add: []string{"SYS_TIME"}, wantAdd: []string{"SYS_TIME"}},
		{name: "drop", allow: DefaultAllowCaps, drop: []string{"mknod", "cap_chown"}, wantDrop: []string{"CHOWN", "NET_RAW", "MKNOD"}},
		{name: "drop all", allow: DefaultAllowCaps, drop: []string{"all"}, wantDrop: dockerCapsInOrder()},
		{name: "add all needs all allowed", allow: DefaultAllowCaps, add: []string{"all"}, wantErr: "not allowed"},
		{name: "all allowed", allow: []string{"all"}, add: []string{"net_admin"}, wantAdd: []string{"NET_ADMIN"}},
		{name: "narrow allow_caps narrows the defaults", allow: []string{"chown"}, wantDrop: without(dockerCapsInOrder(), "CHOWN")},
		{name: "unknown", allow: DefaultAllowCaps, add: []string{"fly"}, wantErr: `cap_add: unknown capabilities ["fly"]`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			add, drop, err := capDelta(tc.allow, tc.add, tc.drop)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil || !slices.Equal(add, tc.wantAdd) || !slices.Equal(drop, tc.wantDrop) {
				t.Fatalf("capDelta = add %q drop %q, %v; want add %q drop %q", add, drop, err, tc.wantAdd, tc.wantDrop)
			}
		})
	}
}

// dockerCapsInOrder is Docker's default set in allCaps order.
func dockerCapsInOrder() []string {
	var out []string
	for _, c := range allCaps {
		if slices.Contains(dockerDefaultCaps, c) {
			out = append(out, c)
		}
	}
	return out
}

func without(list []string, c string) []string {
	return slices.DeleteFunc(slices.Clone(list), func(s string) bool { return s == c })
}
