package structs

import (
	"strings"
	"testing"
)

// TestNamesThatBecomePaths runs every malicious or odd name through
// Validate as a job ID, a group name and a task name. Each row says which
// of the three refuse it (with the error naming the field and the value).
func TestNamesThatBecomePaths(t *testing.T) {
	long := strings.Repeat("a", MaxPathNameLength+1)
	cases := []struct {
		name                     string
		badID, badGroup, badTask bool
		want                     string // substring of the task's error
	}{
		// Path traversal.
		{name: "../x", badGroup: true, badTask: true, want: `contains "/"`},
		{name: "../../../x", badGroup: true, badTask: true, want: `contains "/"`},
		{name: "a/b", badGroup: true, badTask: true, want: `use "-" or "_" instead`},
		{name: "/abs", badGroup: true, badTask: true, want: `contains "/"`},
		{name: "..", badID: true, badGroup: true, badTask: true, want: `".." is not allowed`},
		{name: ".", badID: true, badGroup: true, badTask: true, want: `"." is not allowed`},
		// Bytes no name needs.
		{name: "web\x00", badID: true, badGroup: true, badTask: true, want: "null character"},
		{name: "web\n", badGroup: true, badTask: true, want: "control character U+000A"},
		{name: "job-id/with\\troublesome:characters\n?&字", badGroup: true, badTask: true, want: `contains "/"`}, // Nomad's API tests' job ID
		{name: "\x1b[31mred", badID: true, badGroup: true, badTask: true, want: "control character U+001B"},
		{name: "a\x7fb", badGroup: true, badTask: true, want: "control character U+007F"},
		{name: "a\u0085b", badID: true, badGroup: true, badTask: true, want: "control character U+0085"},
		{name: "evil\u202etxt.exe", badID: true, badGroup: true, badTask: true, want: "control character U+202E"},
		{name: "bad\xffutf8", badID: true, badGroup: true, badTask: true, want: "not valid UTF-8"},
		// Length: group and task names become directory and file names.
		{name: long, badGroup: true, badTask: true, want: "bytes long: at most 128"},
		// Reserved for the alloc dir's own entries.
		{name: "alloc", badTask: true, want: `task name "alloc" is reserved`},
		{name: ".shims", badTask: true, want: "is reserved"},
		{name: ".hidden", badTask: true, want: "is reserved"},
		// Nomad refuses spaces in job IDs only.
		{name: "my task", badID: true},
		// Accepted everywhere: what real job files use, and look-alikes of
		// "/" and "." that are plain characters to a file system.
		{name: "web"},
		{name: "web-1.2_beta"},
		{name: "web..x"},
		{name: "ünïcödé"},
		{name: "a\u2215b"},     // division slash
		{name: "a\uff0fb"},     // fullwidth solidus
		{name: "\u2024\u2024"}, // one dot leader, twice
		{name: strings.Repeat("a", MaxPathNameLength)},
	}
	for _, tc := range cases {
		t.Run(strings.ToValidUTF8(tc.name, "?"), func(t *testing.T) {
			for _, f := range []struct {
				field  string
				bad    bool
				mutate func(j *Job)
			}{
				{"job ID", tc.badID, func(j *Job) { j.ID, j.Name = tc.name, "web" }},
				{"group name", tc.badGroup, func(j *Job) { j.TaskGroups[0].Name = tc.name }},
				{"task name", tc.badTask, func(j *Job) { j.TaskGroups[0].Tasks[0].Name = tc.name }},
			} {
				j := validJob()
				f.mutate(j)
				err := j.Validate()
				if !f.bad {
					if err != nil {
						t.Errorf("%s %q refused: %v", f.field, tc.name, err)
					}
					continue
				}
				if err == nil {
					t.Errorf("%s %q accepted", f.field, tc.name)
					continue
				}
				if KindOf(err) != KindInvalid {
					t.Errorf("%s: kind %v, want invalid", f.field, KindOf(err))
				}
				if !strings.Contains(err.Error(), f.field) {
					t.Errorf("%s: the error does not name the field: %v", f.field, err)
				}
				if f.field == "task name" && !strings.Contains(err.Error(), tc.want) {
					t.Errorf("task name error %q, want it to contain %q", err, tc.want)
				}
				if f.field == "task name" && !strings.Contains(err.Error(), `group "g"`) {
					t.Errorf("task name error does not name the group: %v", err)
				}
			}
		})
	}
}

// TestJobIDsOfChildJobs: periodic and dispatched jobs' IDs hold a "/".
func TestJobIDsOfChildJobs(t *testing.T) {
	for _, id := range []string{"batch/periodic-1700000000", "job/dispatch-1700000000-1a2b3c4d"} {
		j := validJob()
		j.ID = id
		if err := j.Validate(); err != nil {
			t.Errorf("%q: %v", id, err)
		}
	}
}

func TestJobNameCharacters(t *testing.T) {
	j := validJob()
	j.Name = "web\x00"
	if err := j.Validate(); err == nil || !strings.Contains(err.Error(), `job name "web\x00" contains a null character`) {
		t.Errorf("Validate = %v", err)
	}
}
