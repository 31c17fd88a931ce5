package docker

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestSecurityOpts(t *testing.T) {
	alloc := t.TempDir()
	taskDir := filepath.Join(alloc, "web")
	if err := os.MkdirAll(filepath.Join(taskDir, "local"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(taskDir, "local", "seccomp.json"), []byte("{\n  \"defaultAction\": \"SCMP_ACT_ALLOW\"\n}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	paths := hostPaths{taskDir: taskDir, allocDir: alloc}
	cases := []struct {
		name       string
		opts       []string
		privileged bool
		want       []string
		wantErr    string
	}{
		{name: "plain", opts: []string{"no-new-privileges", "no-new-privileges=true", "label:type:svirt_apache_t", "apparmor=docker-default"},
			want: []string{"no-new-privileges", "no-new-privileges=true", "label:type:svirt_apache_t", "apparmor=docker-default"}},
		{name: "seccomp profile file is sent inline", opts: []string{"seccomp=local/seccomp.json"}, want: []string{`seccomp={"defaultAction":"SCMP_ACT_ALLOW"}`}},
		{name: "malformed", opts: []string{"nonsense"}, wantErr: `security_opt "nonsense": want "key=value"`},
		{name: "seccomp unconfined needs allow_privileged", opts: []string{"seccomp=unconfined"}, wantErr: "allow_privileged = true"},
		{name: "apparmor unconfined needs allow_privileged", opts: []string{"apparmor=unconfined"}, wantErr: "allow_privileged = true"},
		{name: "label disable needs allow_privileged", opts: []string{"label:disable"}, wantErr: "allow_privileged = true"},
		{name: "unconfined with allow_privileged", opts: []string{"seccomp=unconfined", "systempaths=unconfined"}, privileged: true, want: []string{"seccomp=unconfined", "systempaths=unconfined"}},
		{name: "profile outside the alloc", opts: []string{"seccomp=/etc/passwd"}, wantErr: "volumes { enabled = true }"},
		{name: "profile not json", opts: []string{"seccomp=local"}, wantErr: "read the seccomp profile"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := securityOpts(tc.opts, paths, tc.privileged)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil || !slices.Equal(got, tc.want) {
				t.Fatalf("securityOpts = %q, %v; want %q", got, err, tc.want)
			}
		})
	}
}
