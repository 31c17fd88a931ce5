package structs

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

func validJob() *Job {
	j := &Job{
		ID: "web",
		TaskGroups: []*TaskGroup{{
			Name:  "g",
			Count: 1,
			Tasks: []*Task{{Name: "t", Driver: "raw_exec"}},
		}},
	}
	j.Canonicalize()
	return j
}

func TestJobCanonicalizeDefaults(t *testing.T) {
	j := validJob()
	if j.Namespace != DefaultNamespace || j.Region != DefaultRegion || j.Type != JobTypeService ||
		j.Priority != JobDefaultPriority || j.Name != "web" {
		t.Fatalf("job defaults not applied: %+v", j)
	}
	task := j.TaskGroups[0].Tasks[0]
	if task.KillTimeout != DefaultKillTimeout {
		t.Errorf("kill timeout = %s, want %s", task.KillTimeout, DefaultKillTimeout)
	}
	if r := task.Resources; r.CPU != DefaultResourcesCPU || r.MemoryMB != DefaultResourcesMemoryMB {
		t.Errorf("resources = %+v, want defaults", task.Resources)
	}
	if *task.RestartPolicy != *DefaultRestartPolicy(JobTypeService) {
		t.Errorf("restart policy = %+v, want service default", task.RestartPolicy)
	}
	// Idempotent.
	before := j.Copy()
	j.Canonicalize()
	if j.TaskGroups[0].Tasks[0].KillTimeout != before.TaskGroups[0].Tasks[0].KillTimeout {
		t.Error("second Canonicalize changed the job")
	}
}

func TestBatchRestartDefault(t *testing.T) {
	p := DefaultRestartPolicy(JobTypeBatch)
	if p.Attempts != 3 || p.Interval != 24*time.Hour || p.Delay != 15*time.Second || p.Mode != RestartPolicyModeFail {
		t.Fatalf("batch default = %+v", p)
	}
}

func TestJobValidate(t *testing.T) {
	cases := []struct {
		name   string
		mutate func(j *Job)
		want   string // substring of the error; "" means valid
	}{
		{"valid", func(j *Job) {}, ""},
		{"missing id", func(j *Job) { j.ID = "" }, "job ID is missing"},
		{"bad type", func(j *Job) { j.Type = "cron" }, `job type "cron" is invalid`},
		{"priority", func(j *Job) { j.Priority = 101 }, "priority 101 is out of range"},
		{"no groups", func(j *Job) { j.TaskGroups = nil }, "no task groups"},
		{"negative count", func(j *Job) { j.TaskGroups[0].Count = -1 }, `group "g": count -1 must not be negative`},
		{"missing driver", func(j *Job) { j.TaskGroups[0].Tasks[0].Driver = "" }, `group "g", task "t": driver is missing`},
		{"duplicate task", func(j *Job) {
			g := j.TaskGroups[0]
			g.Tasks = append(g.Tasks, g.Tasks[0].Copy())
		}, `task "t" is defined twice`},
		{"two leaders", func(j *Job) {
			g := j.TaskGroups[0]
			c := g.Tasks[0].Copy()
			c.Name = "u"
			g.Tasks = append(g.Tasks, c)
			g.Tasks[0].Leader, g.Tasks[1].Leader = true, true
		}, "2 leader tasks"},
		{"bad lifecycle", func(j *Job) { j.TaskGroups[0].Tasks[0].Lifecycle = &TaskLifecycle{Hook: "later"} }, `lifecycle hook "later" is invalid`},
		{"low memory", func(j *Job) { j.TaskGroups[0].Tasks[0].Resources.MemoryMB = 1 }, "memory 1 MB is below the minimum"},
		{"bad restart mode", func(j *Job) { j.TaskGroups[0].RestartPolicy.Mode = "never" }, `restart mode "never" is invalid`},
		{"restart too dense", func(j *Job) {
			j.TaskGroups[0].RestartPolicy = &RestartPolicy{Attempts: 10, Delay: time.Minute, Interval: time.Minute, Mode: "fail"}
		}, "do not fit"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			j := validJob()
			tc.mutate(j)
			err := j.Validate()
			if tc.want == "" {
				if err != nil {
					t.Fatalf("unexpected error: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error = %v, want it to contain %q", err, tc.want)
			}
			if KindOf(err) != KindInvalid {
				t.Errorf("kind = %v, want invalid", KindOf(err))
			}
		})
	}
}

func TestJobCopyIsDeep(t *testing.T) {
	j := validJob()
	j.Meta = map[string]string{"a": "1"}
	c := j.Copy()
	c.Meta["a"] = "2"
	c.TaskGroups[0].Tasks[0].Resources.CPU = 999
	c.TaskGroups[0].Name = "other"
	if j.Meta["a"] != "1" || j.TaskGroups[0].Tasks[0].Resources.CPU == 999 || j.TaskGroups[0].Name != "g" {
		t.Fatal("Copy shares state with the original")
	}
}

func TestAllocIndex(t *testing.T) {
	for name, want := range map[string]int{
		"web.g[0]": 0, "web.g[12]": 12, "a.b[c][3]": 3, "web.g": -1, "web.g[]": -1, "x[1a]": -1, "": -1,
	} {
		a := &Allocation{Name: name}
		if got := a.Index(); got != want {
			t.Errorf("Index(%q) = %d, want %d", name, got, want)
		}
	}
	if got := AllocName("web", "g", 7); got != "web.g[7]" {
		t.Errorf("AllocName = %q", got)
	}
}

func TestTaskEventDisplayMessages(t *testing.T) {
	cases := []struct {
		ev   *TaskEvent
		want string
	}{
		{NewTaskEvent(TaskReceived), "Task received by client"},
		{NewTaskEvent(TaskSetup).SetMessage("Building Task Directory"), "Building Task Directory"},
		{NewTaskEvent(TaskStarted), "Task started by client"},
		{NewTaskEvent(TaskKilling).SetKillTimeout(5*time.Second, "SIGINT"), "Sent interrupt. Waiting 5s before force killing"},
		{NewTaskEvent(TaskKilling).SetKillTimeout(20*time.Second, "SIGTERM"), "Sent terminate. Waiting 20s before force killing"},
		{NewTaskEvent(TaskTerminated).SetExitCode(130).SetSignal(2), "Exit Code: 130, Signal: 2"},
		{NewTaskEvent(TaskTerminated).SetExitCode(137).SetSignal(9).SetOOMKilled(true), "Exit Code: 137, Signal: 9, OOM Killed"},
		{NewTaskEvent(TaskTerminated).SetExitCode(0), "Exit Code: 0"},
		{NewTaskEvent(TaskKilled), "Task successfully killed"},
		{NewTaskEvent(TaskRestarting).SetRestartDelay(16500 * time.Millisecond), "Task restarting in 16.5s"},
		{NewTaskEvent(TaskNotRestarting).SetRestartReason("Exceeded allowed attempts 2 in interval 30m0s and mode is \"fail\""), "Exceeded allowed attempts 2 in interval 30m0s and mode is \"fail\""},
		{NewTaskEvent(TaskSiblingFailed).SetFailedSibling("db"), `Task's sibling "db" failed`},
		{NewTaskEvent(TaskLeaderDead), "Leader task in group is dead"},
		{NewTaskEvent(TaskDriverFailure).SetDriverError(errString("no such file")), "no such file"},
	}
	for _, tc := range cases {
		got := tc.ev.PopulateDisplayMessage().DisplayMessage
		if got != tc.want {
			t.Errorf("%s: DisplayMessage = %q, want %q", tc.ev.Type, got, tc.want)
		}
	}
	term := NewTaskEvent(TaskTerminated).SetExitCode(130).SetSignal(2).PopulateDisplayMessage()
	if term.Details["exit_code"] != "130" || term.Details["signal"] != "2" {
		t.Errorf("Terminated details = %v", term.Details)
	}
}

type errString string

func (e errString) Error() string { return string(e) }

func TestKindOfThroughWrapping(t *testing.T) {
	err := NotFound("job", "web")
	wrapped := errorsJoin("lookup", err)
	if KindOf(wrapped) != KindNotFound {
		t.Fatalf("KindOf(wrapped) = %v", KindOf(wrapped))
	}
	if KindOf(errString("x")) != KindInternal {
		t.Fatal("plain error should be internal")
	}
}

func errorsJoin(ctx string, err error) error { return fmt.Errorf("%s: %w", ctx, err) }

func TestErrorKindHTTPStatus(t *testing.T) {
	for kind, want := range map[ErrorKind]int{
		KindInvalid: 400, KindNotFound: 404, KindConflict: 409, KindUnavailable: 503, KindInternal: 500,
	} {
		if got := kind.HTTPStatus(); got != want {
			t.Errorf("%v.HTTPStatus() = %d, want %d", kind, got, want)
		}
	}
}
