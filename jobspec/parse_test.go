package jobspec

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// TestParseGolden parses every testdata/*.hcl and *.json job file and
// compares the job, as JSON, with its .golden.json file.
func TestParseGolden(t *testing.T) {
	var files []string
	for _, pattern := range []string{"testdata/*.hcl", "testdata/*.nomad.json"} {
		m, err := filepath.Glob(pattern)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, m...)
	}
	if len(files) == 0 {
		t.Fatal("no test files in testdata/")
	}
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			job, err := ParseFile(file)
			if err != nil {
				t.Fatalf("ParseFile: %v", err)
			}
			got := goldenJSON(t, job)
			golden := goldenPath(file)
			if *update {
				if err := os.WriteFile(golden, got, 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("read golden file (run go test -update to create it): %v", err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("%s differs from %s (run go test -update and review the diff):\n%s", file, golden, got)
			}
		})
	}
}

// goldenPath is testdata/x.golden.json for testdata/x.hcl or x.nomad.json.
func goldenPath(file string) string {
	base := strings.TrimSuffix(strings.TrimSuffix(file, ".hcl"), ".nomad.json")
	return base + ".golden.json"
}

// TestParseInvalid checks that each invalid job file fails with an error at
// the exact position of the problem, naming it.
func TestParseInvalid(t *testing.T) {
	tests := []struct {
		file    string
		wantPos string // "line:col"
		wantMsg string
	}{
		{"syntax.hcl", "4:3", "Argument or block definition required"},
		{"unknown_attribute.hcl", "6:5", `An argument named "replicas" is not expected here`},
		{"unknown_block.hcl", "8:7", `Blocks of type "sidecar_task" are not expected here`},
		{"bad_duration.hcl", "7:22", `"20 seconds" is not a duration`},
		{"negative_duration.hcl", "4:15", `"-5s" must not be negative`},
		{"negative_count.hcl", "3:13", `"count" must not be negative, got -1`},
		{"missing_driver.hcl", "3:5", `Task "t" needs a driver`},
		{"empty_driver.hcl", "4:16", `Task "t" needs a driver`},
		{"bad_cron.hcl", "5:24", `"61 * * * *" in crons does not parse`},
		{"bad_payload.hcl", "3:15", `"sometimes" is not a payload requirement`},
		{"bad_time_zone.hcl", "5:17", `"Mars/Olympus_Mons" is not a time zone`},
		{"cron_and_crons.hcl", "5:5", "Set either cron or crons, not both"},
		{"unsupported_connect.hcl", "8:7", `"connect" is not supported by drover yet`},
		{"no_job.hcl", "1:1", "Missing job block"},
		{"two_jobs.hcl", "9:1", "Duplicate job block"},
		{"bad_type.hcl", "2:10", `"cron" is not a job type`},
		{"bad_operator.hcl", "4:17", `"~=" is not a constraint operator`},
		{"bad_regexp.hcl", "5:17", "Invalid regular expression"},
		{"bad_hook.hcl", "5:16", `"prerun" is not a lifecycle hook`},
		{"bad_restart_mode.hcl", "5:18", `"retry" is not a restart mode`},
		{"wrong_type.hcl", "3:13", `Invalid value for "count": a number is required, got string`},
		{"fractional_count.hcl", "3:13", "A whole number is required, got 1.5"},
		{"duplicate_task.hcl", "7:10", `A task named "t" is already defined`},
		{"duplicate_resources.hcl", "10:7", "Duplicate resources block"},
		{"meta_both_forms.hcl", "4:3", "meta is set both as an argument"},
		{"unknown_variable.hcl", "5:27", `Unsupported attribute: This object does not have an attribute named "missing"`},
		{"no_group.hcl", "1:1", `Job "empty" has no group`},
		{"no_task.hcl", "2:3", `Group "g" has no task`},
		{"service_unknown_attribute.hcl", "7:9", `An argument named "every" is not expected here`},
		{"conflicting_operators.hcl", "5:5", `"version" sets the operator to "version", but it is already "regexp"`},
		{"duplicate_group.hcl", "7:9", `A group named "g" is already defined at line 2, column 3`},
		{"missing_hook.hcl", "5:7", "A lifecycle block needs hook"},
		{"template_bad_splay.hcl", "7:17", `"often" is not a duration`},
		{"circular_locals.hcl", "2:3", `Local "a" refers to itself`},
		{"missing_variable_value.hcl", "1:1", `Variable "image" has no default`},
		{"spread_percent_sum.hcl", "3:5", "The targets' percents add up to 110"},
		{"spread_unknown_attribute.hcl", "3:17", `"${rack}" names no node attribute`},
		{"spread_bad_weight.hcl", "5:19", "The weight must be in [1, 100], got 0"},
		{"spread_duplicate_target.hcl", "8:14", `A target "r1" is already defined at line 5`},
		{"affinity_bad_weight.hcl", "8:21", "The weight must be in [-100, 100] and not 0, got 150"},
		{"affinity_bad_operator.hcl", "4:17", `"distinct_hosts" is not an affinity operator`},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			path := filepath.Join("testdata", "invalid", tt.file)
			job, err := ParseFile(path)
			if err == nil {
				t.Fatalf("ParseFile(%s) = %+v, want an error", path, job)
			}
			if job != nil {
				t.Errorf("ParseFile returned a job along with the error")
			}
			msg := err.Error()
			wantPrefix := path + ":" + tt.wantPos + ": "
			if !strings.HasPrefix(msg, wantPrefix) {
				t.Errorf("error = %q\nwant it to start with %q", msg, wantPrefix)
			}
			if !strings.Contains(msg, tt.wantMsg) {
				t.Errorf("error = %q\nwant it to contain %q", msg, tt.wantMsg)
			}
		})
	}
}

// goldenJSON is the indented JSON of v, without HTML escaping so that
// operators such as ">=" read as written.
func goldenJSON(t *testing.T, v any) []byte {
	t.Helper()
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestParseReportsEveryError checks that one parse reports all the problems
// it finds, each as an *Error with its own position, in source order.
func TestParseReportsEveryError(t *testing.T) {
	src := `job "x" {
  group "g" {
    count = -2
    task "a" {
      driver       = "exec"
      kill_timeout = "soon"
    }
    task "b" {
      bogus = 1
    }
  }
}
`
	_, err := Parse("multi.hcl", []byte(src))
	if err == nil {
		t.Fatal("Parse succeeded, want errors")
	}
	want := []string{
		"multi.hcl:3:13: Invalid value for \"count\"",
		"multi.hcl:6:22: Invalid duration for \"kill_timeout\"",
		"multi.hcl:8:5: Missing driver",
		"multi.hcl:9:7: Unsupported argument",
	}
	lines := strings.Split(err.Error(), "\n")
	if len(lines) != len(want) {
		t.Fatalf("got %d errors, want %d:\n%v", len(lines), len(want), err)
	}
	for i, w := range want {
		if !strings.HasPrefix(lines[i], w) {
			t.Errorf("error %d = %q, want prefix %q", i, lines[i], w)
		}
	}
	var e *Error
	if !errors.As(err, &e) || e.Line != 3 || e.Column != 13 {
		t.Errorf("errors.As(*Error) = %+v, want the first error at 3:13", e)
	}
}

func TestParseFileMissing(t *testing.T) {
	_, err := ParseFile(filepath.Join(t.TempDir(), "nope.nomad.hcl"))
	if !errors.Is(err, os.ErrNotExist) {
		t.Errorf("ParseFile error = %v, want one wrapping os.ErrNotExist", err)
	}
}
