package shim

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

func TestDescendants(t *testing.T) {
	// sh says "started" once it has forked both sleeps.
	cmd := exec.Command("/bin/sh", "-c", "sleep 100 & sleep 100 & echo started; wait")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	sh := cmd.Process.Pid
	if line, err := bufio.NewReader(out).ReadString('\n'); line != "started\n" {
		t.Fatalf("sh said %q, %v", line, err)
	}
	kids, err := descendantsFromScan(sh)
	if err != nil || len(kids) != 2 {
		t.Fatalf("descendants of sh: %v, %v; want its two sleeps", kids, err)
	}
	t.Cleanup(func() {
		for _, p := range kids {
			_ = exec.Command("kill", "-9", strconv.Itoa(p)).Run()
		}
	})
	want := append([]int{sh}, kids...)
	slices.Sort(want)
	for name, find := range map[string]func(int) ([]int, error){
		"children files": descendantsFromChildren,
		"scan":           descendantsFromScan,
		"descendants":    descendants,
	} {
		got, err := find(os.Getpid())
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		// The test binary may have other children (shims' launchers of
		// parallel tests): look only at sh's tree.
		got = slices.DeleteFunc(got, func(p int) bool { return !slices.Contains(want, p) })
		slices.Sort(got)
		if !slices.Equal(got, want) {
			t.Errorf("%s: descendants = %v, want %v", name, got, want)
		}
	}
}

// TestTaskProcessesOutsideItsGroup starts a task that starts a process in
// a session of its own (as a daemon does): stats count it, and it is
// killed when the task's main process exits.
func TestTaskProcessesOutsideItsGroup(t *testing.T) {
	spec := testSpec(t, "")
	pidFile := filepath.Join(spec.Dir, "escaped.pid")
	spec.Args = []string{"-c", `setsid sh -c 'echo $$ > escaped.tmp; mv escaped.tmp escaped.pid; exec sleep 1000' &
		while [ ! -e escaped.pid ]; do sleep 0.01; done; echo ready; exec sleep 1000`}
	h := startShim(t, spec)
	waitForLog(t, spec.StdoutPath, "ready")
	b, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatal(err)
	}
	escaped, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = exec.Command("kill", "-9", strconv.Itoa(escaped)).Run() })
	st, err := readProcStat(escaped)
	if err != nil {
		t.Fatal(err)
	}
	if st.pgrp == h.State().TaskPID {
		t.Fatalf("the escaped process is still in the task's group %d", st.pgrp)
	}
	u, err := h.Stats(ctxT(t))
	if err != nil {
		t.Fatal(err)
	}
	if u.Pids != 2 {
		t.Errorf("stats count %d processes, want 2 (sh and the escaped sleep)", u.Pids)
	}
	// The task's main process ends; the shim ends what is left.
	if err := h.Signal(ctxT(t), "SIGKILL"); err != nil {
		t.Fatal(err)
	}
	if _, err := h.Wait(ctxT(t)); err != nil {
		t.Fatal(err)
	}
	if !pidGone(escaped) {
		t.Errorf("process %d that left the task's group outlived the task", escaped)
	}
}
