package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	nomad "github.com/hashicorp/nomad/api"

	"github.com/drover-io/drover/api"
)

// volumeJob is a batch job id of one task of driver (exec or docker)
// running script with the group's host volumes "data" (source "shared",
// mounted at /data) and "certs" (source "certs", read-only, at /certs),
// and a sticky, migrating ephemeral disk: all of them together.
func volumeJob(id, driver, script string) string {
	config := fmt.Sprintf(`command = "/bin/sh"
        args    = ["-c", %q]`, script)
	if driver == "docker" {
		config = fmt.Sprintf(`image   = %q
        command = "sh"
        args    = ["-c", %q]`, dockerTestImage, script)
	}
	return fmt.Sprintf(`job %q {
  type = "batch"

  group "g" {
    ephemeral_disk {
      size    = 150
      sticky  = true
      migrate = true
    }

    restart {
      attempts = 0
      mode     = "fail"
    }

    volume "data" {
      type   = "host"
      source = "shared"
    }

    volume "certs" {
      type      = "host"
      source    = "certs"
      read_only = true
    }

    task "t" {
      driver = %q

      config {
        %s
      }

      volume_mount {
        volume      = "data"
        destination = "/data"
      }

      volume_mount {
        volume      = "certs"
        destination = "/certs"
      }

      resources {
        cpu    = 20
        memory = 32
      }
    }
  }
}
`, id, driver, config)
}

// hostVolumeAgent starts a dev agent offering host volumes "shared" (a
// directory every task user may write) and "certs" (read-only, holding
// ca.pem), and returns it with their paths.
func hostVolumeAgent(t *testing.T) (a *agent, shared, certs string) {
	t.Helper()
	dir := t.TempDir()
	shared, certs = filepath.Join(dir, "shared"), filepath.Join(dir, "certs")
	for _, d := range []string{shared, certs} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	// exec tasks run as nobody: the operator gives the volume to them.
	if err := os.Chmod(shared, 0o777); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(certs, "ca.pem"), []byte("the CA\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	a = startDevAgentWithConfig(t, fmt.Sprintf(`
client {
  host_volume "shared" {
    path = %q
  }
  host_volume "certs" {
    path      = %q
    read_only = true
  }
}
`, shared, certs))
	return a, shared, certs
}

// runBatch runs a batch job with the CLI and waits for its allocation to
// complete, failing the test with the task's output if it does not.
func runBatch(t *testing.T, a *agent, id, hcl string) *api.AllocationListStub {
	t.Helper()
	c := a.client(t)
	if r := a.cli(t, "job", "run", "-detach", writeFile(t, id+".nomad.hcl", hcl)); r.code != 0 {
		t.Fatalf("job run %s:\n%s", id, r)
	}
	var alloc *api.AllocationListStub
	waitFor(t, 3*time.Minute, "job "+id+" to complete", func() (bool, string) {
		var why string
		alloc, why = jobAlloc(t, c, id)
		if alloc == nil {
			return false, why
		}
		switch alloc.ClientStatus {
		case api.AllocClientStatusComplete:
			return true, ""
		case api.AllocClientStatusFailed, api.AllocClientStatusLost:
			logs := a.cli(t, "alloc", "logs", "-stderr", alloc.ID, "t")
			out := a.cli(t, "alloc", "logs", alloc.ID, "t")
			st := a.cli(t, "alloc", "status", alloc.ID)
			t.Fatalf("job %s's alloc %s: %s\nstdout: %s\nstderr: %s\nstatus:\n%s", id, alloc.ID, alloc.ClientStatus, out.stdout, logs.stdout, st.stdout)
		}
		return false, "alloc is " + alloc.ClientStatus
	})
	return alloc
}

// mountsOf returns the host's mount table lines that mention one of ids.
func mountsOf(t *testing.T, ids ...string) []string {
	t.Helper()
	b, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, l := range strings.Split(string(b), "\n") {
		if secretsTmpfs(l) {
			continue // the host's own, on purpose (client/allocdir)
		}
		for _, id := range ids {
			if id != "" && strings.Contains(l, id) {
				out = append(out, l)
			}
		}
	}
	return out
}

// secretsTmpfs reports whether a mountinfo line is a task's secrets
// tmpfs, which the client mounts on the host for the allocation's life.
func secretsTmpfs(line string) bool {
	f := strings.Fields(line)
	_, fsPart, ok := strings.Cut(line, " - ")
	return ok && len(f) > 4 && strings.HasSuffix(f[4], "/secrets") && strings.HasPrefix(fsPart, "tmpfs ")
}

// TestHostVolumesEndToEnd: a dev agent offers two host volumes. An exec
// allocation writes to one; the next allocation, a docker one, reads what
// it wrote and writes too; a third, exec again, reads that. Each finds
// the read-only volume's file and cannot write there. Nothing stays
// mounted on the host once they ended.
func TestHostVolumesEndToEnd(t *testing.T) {
	t.Parallel()
	requireExecDriver(t)
	a, shared, _ := hostVolumeAgent(t)
	c := a.client(t)
	nodes, _, err := c.Nodes().List(nil)
	if err != nil || len(nodes) != 1 {
		t.Fatalf("nodes: %v, %v", nodes, err)
	}
	node, _, err := c.Nodes().Info(nodes[0].ID, nil)
	if err != nil {
		t.Fatal(err)
	}
	if hv := node.HostVolumes["certs"]; hv == nil || !hv.ReadOnly || node.HostVolumes["shared"] == nil {
		t.Fatalf("the node reports host volumes %+v, want shared and read-only certs", node.HostVolumes)
	}

	// Each task checks the read-only volume, reads what the previous one
	// wrote (if any) and writes its own file.
	check := `cat /certs/ca.pem > /dev/null || exit 3; if touch /certs/x 2>/dev/null; then echo wrote to a read-only volume; exit 4; fi; `
	first := runBatch(t, a, "vol-exec-1", volumeJob("vol-exec-1", "exec", check+`echo "$NOMAD_ALLOC_ID" > /data/exec.txt`))
	if got := strings.TrimSpace(readHostFile(t, filepath.Join(shared, "exec.txt"))); got != first.ID {
		t.Fatalf("exec task wrote %q to the host volume, want its alloc ID %s", got, first.ID)
	}
	ids := []string{first.ID}
	writer := first.ID
	if why := dockerReady(); why != "" {
		t.Logf("skipping the docker allocation: %s", why)
	} else {
		second := runBatch(t, a, "vol-docker", volumeJob("vol-docker", "docker",
			check+fmt.Sprintf(`test "$(cat /data/exec.txt)" = %q || exit 5; echo "$NOMAD_ALLOC_ID" > /data/docker.txt`, first.ID)))
		ids = append(ids, second.ID)
		writer = second.ID
		if got := strings.TrimSpace(readHostFile(t, filepath.Join(shared, "docker.txt"))); got != second.ID {
			t.Fatalf("docker task wrote %q to the host volume, want its alloc ID %s", got, second.ID)
		}
	}
	file := "exec.txt"
	if writer != first.ID {
		file = "docker.txt"
	}
	third := runBatch(t, a, "vol-exec-2", volumeJob("vol-exec-2", "exec",
		check+fmt.Sprintf(`test "$(cat /data/%s)" = %q || exit 5; echo read`, file, writer)))
	ids = append(ids, third.ID)
	if out := a.cli(t, "alloc", "logs", third.ID, "t"); strings.TrimSpace(out.stdout) != "read" {
		t.Errorf("the last task's output: %s", out)
	}
	if _, err := os.Stat(filepath.Join(shared, "x")); err == nil {
		t.Error("a task wrote to the read-only volume")
	}
	if m := mountsOf(t, ids...); len(m) > 0 {
		t.Errorf("mounts of the ended allocations remain on the host:\n%s", strings.Join(m, "\n"))
	}
}

// TestHostVolumesRefused: jobs whose volumes cannot work are refused with
// a reason naming the problem: a raw_exec task with a volume_mount at
// submission (raw_exec cannot mount), a volume no node offers and a
// writable request of a read-only volume at placement.
func TestHostVolumesRefused(t *testing.T) {
	t.Parallel()
	a, _, _ := hostVolumeAgent(t)
	rawExec := strings.Replace(volumeJob("vol-raw", "exec", "true"), `driver = "exec"`, `driver = "raw_exec"`, 1)
	for _, tc := range []struct {
		cmd  []string
		code int // as Nomad's: job plan's errors exit 255
	}{{[]string{"job", "run"}, 1}, {[]string{"job", "plan"}, 255}} {
		r := a.cli(t, append(tc.cmd, writeFile(t, "raw.nomad.hcl", rawExec))...)
		if r.code != tc.code || !strings.Contains(r.stdout+r.stderr, `driver "raw_exec" cannot mount volumes into its tasks (volume_mount)`) {
			t.Errorf("%s of a raw_exec job with volume_mount: want exit %d and the refusal\n%s", strings.Join(tc.cmd, " "), tc.code, r)
		}
	}
	if r := a.cli(t, "job", "status", "vol-raw"); r.code == 0 {
		t.Errorf("the refused job was registered:\n%s", r)
	}

	for _, tc := range []struct {
		id, edit, want string
	}{
		{"vol-missing", `source = "shared"`, `Constraint "missing compatible host volumes: nope": 1 nodes excluded by filter`},
		{"vol-rw", `source    = "certs"
      read_only = true`, `Constraint "missing compatible host volumes: certs is read-only and the group's volume is not": 1 nodes excluded by filter`},
	} {
		replacement := `source = "nope"`
		if tc.id == "vol-rw" {
			replacement = `source    = "certs"`
		}
		hcl := strings.Replace(volumeJob(tc.id, "exec", "true"), tc.edit, replacement, 1)
		r := a.cli(t, "job", "run", writeFile(t, tc.id+".nomad.hcl", hcl))
		if r.code != 2 || !strings.Contains(r.stdout, tc.want) {
			t.Errorf("job run %s: want exit 2 and %q\n%s", tc.id, tc.want, r)
		}
		if r := a.cli(t, "job", "stop", "-purge", tc.id); r.code != 0 {
			t.Errorf("job stop %s:\n%s", tc.id, r)
		}
	}
}

// readHostFile returns a file's content, failing the test when it cannot.
func readHostFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestHostVolumesNomadAPIClient drives host volumes with HashiCorp's own Go
// client: a job with Nomad's volume and volume_mount structs is accepted
// and placed, reads back, the node's host volumes decode, and a raw_exec
// task with a mount is refused.
func TestHostVolumesNomadAPIClient(t *testing.T) {
	t.Parallel()
	a, shared, _ := hostVolumeAgent(t)
	c, err := nomad.NewClient(&nomad.Config{Address: a.addr})
	if err != nil {
		t.Fatal(err)
	}
	newJob := func(id, driver string) *nomad.Job {
		job := nomad.NewServiceJob(id, id, "global", 50)
		task := nomad.NewTask("t", driver).Require(&nomad.Resources{CPU: pointer(20), MemoryMB: pointer(16)})
		if driver == "raw_exec" {
			task.SetConfig("command", "/bin/sleep").SetConfig("args", []string{"300"})
		} else {
			task.SetConfig("run_for", "300s")
		}
		task.VolumeMounts = []*nomad.VolumeMount{{Volume: pointer("data"), Destination: pointer("/data"), ReadOnly: pointer(true)}}
		tg := nomad.NewTaskGroup("g", 1).AddTask(task)
		tg.Volumes = map[string]*nomad.VolumeRequest{"data": {Name: "data", Type: "host", Source: "shared"}}
		job.AddTaskGroup(tg)
		job.Canonicalize()
		return job
	}
	if _, _, err := c.Jobs().Register(newJob("nomad-raw", "raw_exec"), nil); err == nil || !strings.Contains(err.Error(), "cannot mount volumes") {
		t.Errorf("register of a raw_exec task with a volume_mount = %v, want the refusal", err)
	}
	if _, _, err := c.Jobs().Register(newJob("nomad-vol", "mock_driver"), nil); err != nil {
		t.Fatalf("register: %v", err)
	}
	waitFor(t, 60*time.Second, "the allocation to run", func() (bool, string) {
		allocs, _, err := c.Jobs().Allocations("nomad-vol", false, nil)
		if err != nil || len(allocs) != 1 {
			return false, fmt.Sprintf("%d allocations, %v", len(allocs), err)
		}
		return allocs[0].ClientStatus == "running", "client status " + allocs[0].ClientStatus
	})
	job, _, err := c.Jobs().Info("nomad-vol", nil)
	if err != nil {
		t.Fatal(err)
	}
	tg := job.TaskGroups[0]
	if v := tg.Volumes["data"]; v == nil || v.Type != "host" || v.Source != "shared" {
		t.Errorf("the job's volume reads back as %+v", v)
	}
	if m := tg.Tasks[0].VolumeMounts; len(m) != 1 || *m[0].Destination != "/data" || !*m[0].ReadOnly || *m[0].PropagationMode != "private" {
		t.Errorf("the task's volume mounts read back as %+v", m)
	}
	nodes, _, err := c.Nodes().List(nil)
	if err != nil || len(nodes) != 1 {
		t.Fatalf("nodes: %v, %v", nodes, err)
	}
	node, _, err := c.Nodes().Info(nodes[0].ID, nil)
	if err != nil {
		t.Fatal(err)
	}
	if hv := node.HostVolumes["shared"]; hv == nil || hv.Path != shared || hv.ReadOnly {
		t.Errorf("the node's host volume reads as %+v", hv)
	}
	if _, _, err := c.Jobs().Deregister("nomad-vol", true, nil); err != nil {
		t.Fatal(err)
	}
}
