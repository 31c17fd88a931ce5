package rawexec

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/drover-io/drover/drivers/shared/shim"
)

func TestShimSpec(t *testing.T) {
	h := newHarness(t)
	cfg := h.config("t1", "sh", "-c", "echo ${NOMAD_TASK_NAME}")
	cfg.AllocDir = "/" + strings.Repeat("long/", 30) + "alloc"
	cfg.User = "nobody"
	cfg.LogMaxFiles, cfg.LogMaxFileSizeMB = 3, 7
	spec, err := h.d.shimSpec(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if !filepath.IsAbs(spec.Command) || strings.Join(spec.Args, " ") != "-c echo web" {
		t.Fatalf("command %q %q", spec.Command, spec.Args)
	}
	if spec.Dir != cfg.TaskDir.Dir || spec.User != "nobody" || spec.MaxFiles != 3 || spec.MaxFileSizeMB != 7 || spec.ID != "t1" {
		t.Fatalf("spec = %+v", spec)
	}
	if spec.StdoutPath+".0" != cfg.StdoutPath || spec.StderrPath+".0" != cfg.StderrPath {
		t.Fatalf("log bases %q %q", spec.StdoutPath, spec.StderrPath)
	}
	if spec.StateDir != filepath.Join(cfg.AllocDir, shim.StatesDir, "web-t1") || len(spec.SocketPath) > 107 {
		t.Fatalf("state dir %q, socket %q", spec.StateDir, spec.SocketPath)
	}
	var path bool
	for _, kv := range spec.Env {
		path = path || strings.HasPrefix(kv, "PATH=")
	}
	if !path {
		t.Fatalf("env without PATH: %q", spec.Env)
	}
}
