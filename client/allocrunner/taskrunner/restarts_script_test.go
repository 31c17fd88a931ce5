package taskrunner

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/drover-io/drover/plugins/drivers"
	"github.com/drover-io/drover/structs"
)

var rewrite = flag.Bool("rewrite", false, "rewrite the expected output of the testdata scripts")

// TestRestartTrackerScripts replays the scripts in testdata/restarts. Each
// command is followed by "----" and its expected output, then a blank line:
//
//	policy <attempts> <interval> <delay> <fail|delay> <job type>
//	exit <code> <at>                 the task exited <at> after the start of the script
//	start-error <recoverable|unrecoverable> <at>
//
// Run with -rewrite to regenerate the expected output.
func TestRestartTrackerScripts(t *testing.T) {
	files, err := filepath.Glob("testdata/restarts/*.txt")
	if err != nil || len(files) == 0 {
		t.Fatalf("no scripts: %v", err)
	}
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			b, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			var out strings.Builder
			var rt *RestartTracker
			t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
			blocks := strings.Split(strings.TrimSpace(string(b)), "\n\n")
			for _, block := range blocks {
				cmd, want, _ := strings.Cut(block, "\n----")
				cmd = strings.TrimSpace(cmd)
				got := runRestartCommand(t, &rt, t0, cmd)
				if !*rewrite && strings.TrimSpace(want) != got {
					t.Errorf("%s\n got: %s\nwant: %s", cmd, got, strings.TrimSpace(want))
				}
				fmt.Fprintf(&out, "%s\n----\n%s\n\n", cmd, got)
			}
			if *rewrite {
				if err := os.WriteFile(file, []byte(strings.TrimSpace(out.String())+"\n"), 0o644); err != nil {
					t.Fatal(err)
				}
			}
		})
	}
}

func runRestartCommand(t *testing.T, rt **RestartTracker, t0 time.Time, cmd string) string {
	t.Helper()
	f := strings.Fields(cmd)
	dur := func(s string) time.Duration {
		d, err := time.ParseDuration(s)
		if err != nil {
			t.Fatalf("%s: %v", cmd, err)
		}
		return d
	}
	var d RestartDecision
	switch {
	case len(f) == 6 && f[0] == "policy":
		attempts, err := strconv.Atoi(f[1])
		if err != nil {
			t.Fatalf("%s: %v", cmd, err)
		}
		*rt = NewRestartTracker(&structs.RestartPolicy{Attempts: attempts, Interval: dur(f[2]), Delay: dur(f[3]), Mode: f[4]}, f[5])
		return "ok"
	case len(f) == 3 && f[0] == "exit":
		code, err := strconv.Atoi(f[1])
		if err != nil {
			t.Fatalf("%s: %v", cmd, err)
		}
		d = (*rt).OnExit(t0.Add(dur(f[2])), &drivers.ExitResult{ExitCode: code})
	case len(f) == 3 && f[0] == "start-error":
		d = (*rt).OnStartError(t0.Add(dur(f[2])), f[1] == "recoverable")
	default:
		t.Fatalf("unknown command %q", cmd)
	}
	if d.Restart {
		return fmt.Sprintf("restart in %s: %s", d.Delay, d.Reason)
	}
	if d.Failed {
		return "fail: " + d.Reason
	}
	return "done: " + d.Reason
}
