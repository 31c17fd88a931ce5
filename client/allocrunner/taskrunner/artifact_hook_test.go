package taskrunner

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/drover-io/drover/client/artifact"
	"github.com/drover-io/drover/structs"
)

// fakeFetcher records the artifacts it is asked for and fails as scripted.
type fakeFetcher struct {
	mu    sync.Mutex // guards the fields below
	calls []*artifact.Request
	// fail is the error of each call by source, consumed in order.
	fail map[string][]error
}

func (f *fakeFetcher) Fetch(_ context.Context, req *artifact.Request) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, req)
	src := req.Artifact.GetterSource
	if errs := f.fail[src]; len(errs) > 0 {
		f.fail[src] = errs[1:]
		return errs[0]
	}
	return nil
}

func (f *fakeFetcher) sources() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []string
	for _, c := range f.calls {
		out = append(out, c.Artifact.GetterSource)
	}
	return out
}

func (f *fakeFetcher) last() *artifact.Request {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.calls[len(f.calls)-1]
}

// setArtifactFetcher replaces the runner's artifact hook's fetcher.
func setArtifactFetcher(t *testing.T, tr *TaskRunner, f ArtifactFetcher) {
	t.Helper()
	for _, h := range tr.prestartHooks {
		if a, ok := h.(*artifactHook); ok {
			a.fetcher = f
			return
		}
	}
	t.Fatal("no artifact hook")
}

func TestArtifactHookFollowsTheRestartPolicy(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		policy := &structs.RestartPolicy{Attempts: 2, Interval: time.Hour, Delay: time.Millisecond, Mode: structs.RestartPolicyModeFail}
		task := &structs.Task{Config: map[string]any{"run_for": "1ms", "exit_code": 1}, RestartPolicy: policy,
			Artifacts: []*structs.TaskArtifact{{GetterSource: "http://a"}, {GetterSource: "http://b"}}}
		h := newHarness(t, testAlloc(structs.JobTypeService, task), nil, nil)
		f := &fakeFetcher{fail: map[string][]error{"http://b": {&artifact.Error{Err: errors.New("404"), Recoverable: true}}}}
		setArtifactFetcher(t, h.tr, f)
		go h.tr.Run()
		// Started once after the retry, then the exits use the restarts up.
		waitClosed(t, "the task to end", h.tr.WaitCh())
		st := h.tr.TaskState()
		types := eventTypes(st)
		for _, want := range []string{structs.TaskDownloadingArtifacts, structs.TaskArtifactDownloadFailed, structs.TaskRestarting, structs.TaskStarted} {
			if !slices.Contains(types, want) {
				t.Errorf("no %q event in %q", want, types)
			}
		}
		failed := findEvent(st, structs.TaskArtifactDownloadFailed)
		if !strings.Contains(failed.DownloadError, "404") || !strings.Contains(failed.DisplayMessage, "Failed to download artifacts") {
			t.Errorf("failure event = %+v", failed)
		}
		// a is fetched once; b twice (failed, then fetched); nothing again
		// when the task restarts after its exits.
		if got := f.sources(); !slices.Equal(got, []string{"http://a", "http://b", "http://b"}) {
			t.Errorf("fetched %q", got)
		}
		if i, j := slices.Index(types, structs.TaskArtifactDownloadFailed), slices.Index(types, structs.TaskStarted); i > j {
			t.Errorf("started before the failure: %q", types)
		}
	})
}

func TestArtifactHookUnrecoverableFailureFailsTheTask(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		policy := &structs.RestartPolicy{Attempts: 3, Interval: time.Hour, Delay: time.Millisecond, Mode: structs.RestartPolicyModeFail}
		task := &structs.Task{Config: map[string]any{}, RestartPolicy: policy,
			Artifacts: []*structs.TaskArtifact{{GetterSource: "http://evil"}}}
		h := newHarness(t, testAlloc(structs.JobTypeService, task), nil, nil)
		f := &fakeFetcher{fail: map[string][]error{"http://evil": {&artifact.Error{Err: errors.New("archive entry leaves the task's directory")}}}}
		setArtifactFetcher(t, h.tr, f)
		go h.tr.Run()
		waitClosed(t, "the task to fail", h.tr.WaitCh())
		st := h.tr.TaskState()
		if !st.Failed || st.State != structs.TaskStateDead || findEvent(st, structs.TaskStarted) != nil {
			t.Fatalf("state %+v, events %q", st, eventTypes(st))
		}
		if findEvent(st, structs.TaskArtifactDownloadFailed) == nil || findEvent(st, structs.TaskSetupFailure) == nil {
			t.Fatalf("events %q", eventTypes(st))
		}
		if n := len(f.sources()); n != 1 {
			t.Fatalf("fetched %d times: an unrecoverable failure is not retried", n)
		}
	})
}

func TestArtifactHookInterpolates(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		task := &structs.Task{Config: map[string]any{}, Env: map[string]string{"VERSION": "1.2"},
			Artifacts: []*structs.TaskArtifact{{
				GetterSource:  "https://example.com/app-${VERSION}.tgz",
				RelativeDest:  "local/${NOMAD_TASK_NAME}",
				GetterOptions: map[string]string{"checksum": "sha256:${VERSION}"},
				GetterHeaders: map[string]string{"X-Node": "${node.unique.id}"},
			}}}
		h := newHarness(t, testAlloc(structs.JobTypeService, task), nil, nil)
		f := &fakeFetcher{}
		setArtifactFetcher(t, h.tr, f)
		go h.tr.Run()
		settle(t, "the task to run", func() bool { return h.tr.TaskState().State == structs.TaskStateRunning })
		if err := h.tr.Kill(context.Background(), nil); err != nil {
			t.Fatal(err)
		}
		got := f.last()
		a := got.Artifact
		if a.GetterSource != "https://example.com/app-1.2.tgz" || a.RelativeDest != "local/web" ||
			a.GetterOptions["checksum"] != "sha256:1.2" || a.GetterHeaders["X-Node"] != "node1" {
			t.Errorf("interpolated artifact = %+v", a)
		}
		if got.AllocDir != h.dir.AllocDir || got.TaskDir != "web" {
			t.Errorf("fetched into %s / %s", got.AllocDir, got.TaskDir)
		}
		if task.Artifacts[0].GetterSource != "https://example.com/app-${VERSION}.tgz" {
			t.Error("the task's artifact was changed in place")
		}
	})
}
