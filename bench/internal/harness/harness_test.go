package harness

import (
	"os"
	"strings"
	"testing"
)

func TestReadMemOfThisProcess(t *testing.T) {
	m, err := ReadMem(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if m.RSS <= 0 || m.PSS <= 0 || m.PSS > m.RSS {
		t.Errorf("RSS %d KiB, PSS %d KiB: want 0 < PSS <= RSS", m.RSS, m.PSS)
	}
}

func TestNewAgentConfig(t *testing.T) {
	cases := []struct {
		name    string
		role    Role
		servers []string
		want    []string
		notWant []string
	}{
		{"combined", Combined, nil, []string{"server {", "bootstrap_expect = 1", "client {", `plugin "raw_exec"`}, []string{"servers ="}},
		{"server", Server, nil, []string{"server {"}, []string{"client {", "raw_exec"}},
		{"client", Client, []string{"127.0.0.1:4647"}, []string{"client {", `servers = ["127.0.0.1:4647"]`, `plugin "raw_exec"`}, []string{"server {"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			a, err := NewAgent("drover", t.TempDir(), "n", tc.role, tc.servers...)
			if err != nil {
				t.Fatal(err)
			}
			b, err := os.ReadFile(a.config)
			if err != nil {
				t.Fatal(err)
			}
			cfg := string(b)
			for _, w := range tc.want {
				if !strings.Contains(cfg, w) {
					t.Errorf("config lacks %q:\n%s", w, cfg)
				}
			}
			for _, w := range tc.notWant {
				if strings.Contains(cfg, w) {
					t.Errorf("config has %q:\n%s", w, cfg)
				}
			}
		})
	}
}

func TestScanTreeIgnoresOtherDirs(t *testing.T) {
	tr, err := ScanTree(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if len(tr.Shims) != 0 || len(tr.Tasks) != 0 {
		t.Errorf("found %d shims and %d tasks under an empty dir", len(tr.Shims), len(tr.Tasks))
	}
}
