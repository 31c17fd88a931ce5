package template

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/drover-io/drover/structs"
)

// BenchmarkRerender measures the time from a variable's change at the
// servers (here an in-process fake answering the blocking query at once)
// to the re-rendered file on disk and its Change: consul-template's view,
// the in-memory Nomad API and the write beneath the task directory. It
// does not include the RPC to real servers.
func BenchmarkRerender(b *testing.B) {
	vars := newFakeVars()
	vars.put("nomad/jobs/web", structs.VariableItems{"v": "0"})
	dir := b.TempDir()
	tm := &structs.Template{EmbeddedTmpl: `{{ with nomadVar "nomad/jobs/web" }}{{ .v }}{{ end }}`, DestPath: "local/v"}
	tm.Canonicalize()
	m, err := New(Config{RPC: vars, Identity: webIdentity, TaskDir: dir, Templates: []*structs.Template{tm}})
	if err != nil {
		b.Fatal(err)
	}
	m.Start()
	defer m.Stop()
	if err := m.WaitRendered(context.Background(), time.Hour, func([]string) {}); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for i := range b.N {
		vars.put("nomad/jobs/web", structs.VariableItems{"v": strconv.Itoa(i + 1)})
		select {
		case <-m.Changes():
		case err := <-m.Failed():
			b.Fatal(err)
		case <-time.After(time.Minute):
			b.Fatal("no re-render")
		}
	}
}
