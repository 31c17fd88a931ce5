package taskrunner

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/drover-io/drover/client/allocdir"
	"github.com/drover-io/drover/structs"
)

func TestDispatchHookWritesPayload(t *testing.T) {
	tests := []struct {
		name       string
		dispatched bool
		file       string
		wantFile   bool
		wantErr    bool
	}{
		{name: "dispatched child: written", dispatched: true, file: "in/payload.json", wantFile: true},
		{name: "not dispatched: nothing", dispatched: false, file: "payload.json"},
		{name: "escaping path refused", dispatched: true, file: "../../etc/passwd", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			task := &structs.Task{Name: "t", DispatchPayload: &structs.DispatchPayloadConfig{File: tt.file}}
			alloc := testAlloc(structs.JobTypeBatch, task)
			alloc.Job.Dispatched = tt.dispatched
			alloc.Job.Payload = []byte(`{"n": 1}`)
			local := t.TempDir()
			req := &PrestartRequest{Alloc: alloc, Task: task, TaskDir: &allocdir.TaskDir{LocalDir: local}}
			err := (&dispatchHook{}).Prestart(context.Background(), req, &PrestartResponse{})
			if (err != nil) != tt.wantErr {
				t.Fatalf("Prestart: %v, want error %v", err, tt.wantErr)
			}
			if tt.wantErr {
				if _, err := os.Stat(filepath.Join(local, "..", "..", "etc", "passwd.json")); err == nil {
					t.Error("a file was written outside local/")
				}
				return
			}
			b, err := os.ReadFile(payloadFile(local, task))
			switch {
			case tt.wantFile && (err != nil || string(b) != `{"n": 1}`):
				t.Errorf("payload file: %q %v", b, err)
			case !tt.wantFile && err == nil:
				t.Errorf("payload written for a job that was not dispatched")
			}
		})
	}
}
