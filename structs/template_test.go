package structs

import (
	"strings"
	"testing"
	"time"
)

func TestTemplateValidate(t *testing.T) {
	d := func(v time.Duration) *time.Duration { return &v }
	cases := []struct {
		name string
		t    Template
		want string // "" for valid
	}{
		{name: "inline", t: Template{EmbeddedTmpl: "x", DestPath: "local/a"}},
		{name: "source", t: Template{SourcePath: "local/a.tpl", DestPath: "/local/a", ChangeMode: "noop"}},
		{name: "no template", t: Template{DestPath: "local/a"}, want: "no template"},
		{name: "both", t: Template{EmbeddedTmpl: "x", SourcePath: "y", DestPath: "local/a"}, want: "both data and source"},
		{name: "no destination", t: Template{EmbeddedTmpl: "x"}, want: "destination is missing"},
		{name: "escaping destination", t: Template{EmbeddedTmpl: "x", DestPath: "local/../../etc/passwd"}, want: "leaves the task's directory"},
		{name: "task dir itself", t: Template{EmbeddedTmpl: "x", DestPath: "/"}, want: "task's directory itself"},
		{name: "signal without signal", t: Template{EmbeddedTmpl: "x", DestPath: "a", ChangeMode: "signal"}, want: "needs a change_signal"},
		{name: "signal", t: Template{EmbeddedTmpl: "x", DestPath: "a", ChangeMode: "signal", ChangeSignal: "SIGHUP"}},
		{name: "script without command", t: Template{EmbeddedTmpl: "x", DestPath: "a", ChangeMode: "script"}, want: "needs a change_script"},
		{name: "script", t: Template{EmbeddedTmpl: "x", DestPath: "a", ChangeMode: "script", ChangeScript: &ChangeScript{Command: "/bin/true"}}},
		{name: "bad mode", t: Template{EmbeddedTmpl: "x", DestPath: "a", ChangeMode: "reload"}, want: `change_mode "reload" is invalid`},
		{name: "bad perms", t: Template{EmbeddedTmpl: "x", DestPath: "a", Perms: "rw-r--r--"}, want: "perms"},
		{name: "wait reversed", t: Template{EmbeddedTmpl: "x", DestPath: "a", Wait: &WaitConfig{Min: d(time.Minute), Max: d(time.Second)}}, want: "wait max"},
		{name: "one delimiter", t: Template{EmbeddedTmpl: "x", DestPath: "a", LeftDelim: "[["}, want: "go together"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.t.Validate()
			if tc.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Validate = %v, want %q", err, tc.want)
			}
		})
	}
}

func TestValidateTemplatesSameDestination(t *testing.T) {
	var errs []string
	validateTemplates("task", []*Template{
		{EmbeddedTmpl: "a", DestPath: "local/x"}, {EmbeddedTmpl: "b", DestPath: "/local/./x"},
	}, func(f string, a ...any) { errs = append(errs, f) })
	if len(errs) != 1 {
		t.Fatalf("errors = %v, want one about the shared destination", errs)
	}
}

func TestTemplateCopyIsDeep(t *testing.T) {
	min := time.Second
	uid := 5
	a := &Template{ChangeScript: &ChangeScript{Args: []string{"x"}}, Wait: &WaitConfig{Min: &min}, Uid: &uid}
	b := a.Copy()
	b.ChangeScript.Args[0] = "y"
	*b.Wait.Min = time.Hour
	*b.Uid = 6
	if a.ChangeScript.Args[0] != "x" || *a.Wait.Min != time.Second || *a.Uid != 5 {
		t.Fatalf("Copy shares memory with the original: %+v", a)
	}
}

func TestTemplateDiffAndValidateInJob(t *testing.T) {
	old := validJob()
	old.TaskGroups[0].Tasks[0].Templates = []*Template{{EmbeddedTmpl: "a", DestPath: "local/a"}}
	new := old.Copy()
	new.TaskGroups[0].Tasks[0].Templates[0].EmbeddedTmpl = "b"
	if old.TaskGroups[0].Tasks[0].Templates[0].EmbeddedTmpl != "a" {
		t.Fatal("Job.Copy shares the templates")
	}
	task := DiffJobs(old, new).TaskGroups[0].Tasks[0]
	if task.Type != DiffTypeEdited || len(task.Objects) != 1 || task.Annotations[0] != AnnotationForcesDestructiveUpdate {
		t.Fatalf("task diff %+v", task)
	}
	if o := task.Objects[0]; o.Name != "Template" || len(o.Fields) != 1 || o.Fields[0].Name != "EmbeddedTmpl" || o.Fields[0].New != "b" {
		t.Errorf("template diff %+v", o)
	}
	new.TaskGroups[0].Tasks[0].Templates[0].DestPath = "../x"
	if err := new.Validate(); err == nil || !strings.Contains(err.Error(), `template 1: destination "../x" leaves`) {
		t.Errorf("Validate = %v", err)
	}
}
