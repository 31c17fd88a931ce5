package e2e

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"maps"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/drover-io/drover/api"
)

// artifactServer serves name -> content on loopback, as a download server
// for artifacts.
func artifactServer(t *testing.T, files map[string][]byte) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, ok := files[strings.TrimPrefix(r.URL.Path, "/")]
		if !ok {
			http.NotFound(w, r)
			return
		}
		_, _ = w.Write(b)
	}))
	t.Cleanup(srv.Close)
	return srv
}

func tarGz(t *testing.T, files map[string]string) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	for _, name := range slices.Sorted(maps.Keys(files)) {
		body := files[name]
		if err := tw.WriteHeader(&tar.Header{Name: name, Mode: 0o644, Size: int64(len(body)), Typeflag: tar.TypeReg}); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write([]byte(body)); err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func sha256Of(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// artifactJob is a batch job whose raw_exec task runs script after the
// artifact blocks are fetched; it is neither restarted more than once
// nor rescheduled.
func artifactJob(id, artifacts, script string) string {
	return fmt.Sprintf(`job %q {
  type = "batch"
  group "g" {
    restart {
      attempts = 1
      delay    = "1s"
      mode     = "fail"
    }
    reschedule {
      attempts  = 0
      unlimited = false
    }
    task "t" {
      driver = "raw_exec"
%s
      config {
        command = "/bin/sh"
        args    = ["-c", %q]
      }
      resources {
        cpu    = 20
        memory = 16
      }
    }
  }
}
`, id, artifacts, script)
}

// waitAllocDone waits for the job's one allocation to end and returns it.
func waitAllocDone(t *testing.T, c *api.Client, jobID string) *api.Allocation {
	t.Helper()
	var alloc *api.Allocation
	waitFor(t, 120*time.Second, "the allocation of "+jobID+" to end", func() (bool, string) {
		stub, why := jobAlloc(t, c, jobID)
		if stub == nil {
			return false, why
		}
		if stub.ClientStatus != "complete" && stub.ClientStatus != "failed" {
			return false, "client status " + stub.ClientStatus
		}
		var err error
		alloc, _, err = c.Allocations().Info(stub.ID, nil)
		return err == nil, fmt.Sprint(err)
	})
	return alloc
}

func artifactEvents(alloc *api.Allocation) []*api.TaskEvent {
	if ts := alloc.TaskStates["t"]; ts != nil {
		return ts.Events
	}
	return nil
}

func eventsOfType(alloc *api.Allocation, typ string) []*api.TaskEvent {
	var out []*api.TaskEvent
	for _, e := range artifactEvents(alloc) {
		if e.Type == typ {
			out = append(out, e)
		}
	}
	return out
}

// TestArtifacts fetches artifacts over HTTP from a server on loopback: a
// file with its checksum and an archive unpacked, which the task then
// reads; a bad checksum is a task event and goes through the restart
// policy; an archive with an entry escaping with ".." is refused, and
// writes nothing outside the task's directory; a destination outside the
// task's directory is refused when the job is submitted.
func TestArtifacts(t *testing.T) {
	t.Parallel()
	a := startAgent(t)
	c := a.client(t)
	tool := []byte("#!/bin/sh\necho tool\n")
	app := tarGz(t, map[string]string{"app/data.txt": "hello from the archive", "app/conf/x.conf": "x=1"})
	marker := "escaped-" + filepath.Base(t.TempDir())
	evil := tarGz(t, map[string]string{"../../../../../" + marker: "pwned", "ok.txt": "ok"})
	srv := artifactServer(t, map[string][]byte{"tool.sh": tool, "app.tar.gz": app, "evil.tar.gz": evil})

	t.Run("fetched, checked and unpacked", func(t *testing.T) {
		job := artifactJob("fetch", fmt.Sprintf(`
      artifact {
        source = "%s/tool.sh"
        options {
          checksum = "sha256:%s"
        }
      }
      artifact {
        source      = "%s/app.tar.gz"
        destination = "local/pkg"
        options {
          checksum = "sha256:%s"
        }
      }`, srv.URL, sha256Of(tool), srv.URL, sha256Of(app)),
			`test "$(cat local/pkg/app/data.txt)" = "hello from the archive" && test -f local/pkg/app/conf/x.conf && grep -q "echo tool" local/tool.sh`)
		if r := a.cli(t, "job", "run", writeFile(t, "fetch.nomad.hcl", job)); r.code != 0 {
			t.Fatalf("job run:\n%s", r)
		}
		alloc := waitAllocDone(t, c, "fetch")
		if alloc.ClientStatus != "complete" {
			t.Fatalf("the task did not find its artifacts: status %s, events %+v", alloc.ClientStatus, artifactEvents(alloc))
		}
		if len(eventsOfType(alloc, "Downloading Artifacts")) != 1 {
			t.Errorf("events: %+v", artifactEvents(alloc))
		}
	})

	t.Run("bad checksum", func(t *testing.T) {
		job := artifactJob("badsum", fmt.Sprintf(`
      artifact {
        source = "%s/tool.sh"
        options {
          checksum = "sha256:%s"
        }
      }`, srv.URL, strings.Repeat("0", 64)), "exit 0")
		if r := a.cli(t, "job", "run", "-detach", writeFile(t, "badsum.nomad.hcl", job)); r.code != 0 {
			t.Fatalf("job run:\n%s", r)
		}
		alloc := waitAllocDone(t, c, "badsum")
		failures := eventsOfType(alloc, "Failed Artifact Download")
		if alloc.ClientStatus != "failed" || len(failures) != 2 {
			t.Fatalf("status %s, %d download failures (want 2: the restart policy allows 1 restart); events %+v",
				alloc.ClientStatus, len(failures), artifactEvents(alloc))
		}
		if !strings.Contains(failures[0].DownloadError, "checksum") || !strings.Contains(failures[0].DisplayMessage, "Failed to download artifacts") {
			t.Errorf("failure event: %+v", failures[0])
		}
		if len(eventsOfType(alloc, "Restarting")) != 1 || len(eventsOfType(alloc, "Not Restarting")) != 1 || len(eventsOfType(alloc, "Started")) != 0 {
			t.Errorf("the restart policy was not followed: %+v", artifactEvents(alloc))
		}
		r := a.cli(t, "alloc", "status", alloc.ID)
		if !strings.Contains(r.stdout, "Failed Artifact Download") {
			t.Errorf("alloc status does not show the failure:\n%s", r)
		}
	})

	t.Run("archive escaping with ..", func(t *testing.T) {
		job := artifactJob("evil", fmt.Sprintf(`
      artifact {
        source = "%s/evil.tar.gz"
      }`, srv.URL), "exit 0")
		if r := a.cli(t, "job", "run", "-detach", writeFile(t, "evil.nomad.hcl", job)); r.code != 0 {
			t.Fatalf("job run:\n%s", r)
		}
		alloc := waitAllocDone(t, c, "evil")
		failures := eventsOfType(alloc, "Failed Artifact Download")
		if alloc.ClientStatus != "failed" || len(failures) == 0 || !strings.Contains(failures[0].DownloadError, "..") {
			t.Fatalf("status %s, events %+v", alloc.ClientStatus, artifactEvents(alloc))
		}
		// Nothing landed outside the task's directory, up to the root.
		for dir := os.TempDir(); ; dir = filepath.Dir(dir) {
			if _, err := os.Stat(filepath.Join(dir, marker)); err == nil {
				t.Fatalf("the archive wrote %s", filepath.Join(dir, marker))
			}
			if dir == "/" {
				break
			}
		}
	})

	t.Run("destination outside the task dir", func(t *testing.T) {
		job := artifactJob("outside", fmt.Sprintf(`
      artifact {
        source      = "%s/tool.sh"
        destination = "../../escape"
      }`, srv.URL), "exit 0")
		r := a.cli(t, "job", "run", writeFile(t, "outside.nomad.hcl", job))
		if r.code == 0 || !strings.Contains(r.stderr+r.stdout, "leaves the task's directory") {
			t.Fatalf("job run of an escaping destination:\n%s", r)
		}
		if _, _, err := c.Jobs().Info("outside", nil); !api.IsNotFound(err) {
			t.Fatalf("the refused job was stored: %v", err)
		}
	})
}
