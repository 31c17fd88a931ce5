package e2e

import (
	"strings"
	"testing"
)

// TestNamespacesCLI creates a namespace, runs a job and writes a variable
// in it, and checks what the servers refuse: a job or a variable in a
// namespace that does not exist, and deleting a namespace that still holds
// a live job or a variable.
func TestNamespacesCLI(t *testing.T) {
	t.Parallel()
	a := startAgent(t)
	ok := func(args ...string) cliResult {
		t.Helper()
		r := a.cli(t, args...)
		if r.code != 0 {
			t.Fatalf("drover %s: %s", strings.Join(args, " "), r)
		}
		return r
	}
	refused := func(want string, args ...string) {
		t.Helper()
		r := a.cli(t, args...)
		if r.code == 0 || !strings.Contains(r.stderr, want) {
			t.Fatalf("drover %s: want a failure saying %q, got %s", strings.Join(args, " "), want, r)
		}
	}
	job := writeFile(t, "sleep.nomad.hcl", `job "sleep" {
  group "g" {
    task "t" {
      driver = "raw_exec"
      config {
        command = "/bin/sleep"
        args    = ["300"]
      }
      resources {
        cpu    = 20
        memory = 16
      }
    }
  }
}
`)
	refused(`namespace "dev" does not exist`, "job", "run", "-detach", "-namespace", "dev", job)
	refused(`namespace "dev" does not exist`, "var", "put", "-namespace", "dev", "app/db", "k=v")

	ok("namespace", "apply", "-description", "developers", "dev")
	if r := ok("namespace", "list"); !strings.Contains(r.stdout, "dev      developers") {
		t.Fatalf("namespace list:\n%s", r.stdout)
	}
	ok("job", "run", "-detach", "-namespace", "dev", job)
	ok("var", "put", "-namespace", "dev", "app/db", "k=v")
	if r := ok("job", "status", "-namespace", "dev", "sleep"); !strings.Contains(r.stdout, "sleep") {
		t.Fatalf("job status in dev:\n%s", r)
	}
	refused(`No job(s) with prefix or ID "sleep" found`, "job", "status", "sleep")
	jobs, _, err := a.client(t).Jobs().List(nil)
	if err != nil || len(jobs) != 0 {
		t.Fatalf("jobs of the default namespace: %v, %v", jobs, err)
	}

	refused("has jobs that are not dead (sleep)", "namespace", "delete", "dev")
	ok("job", "stop", "-purge", "-namespace", "dev", "sleep")
	refused("has variables (app/db", "namespace", "delete", "dev")
	ok("var", "purge", "-namespace", "dev", "app/db")
	ok("namespace", "delete", "dev")
	refused("cannot be deleted", "namespace", "delete", "default")
	if r := ok("namespace", "list"); strings.Contains(r.stdout, "dev") {
		t.Fatalf("dev is still listed:\n%s", r.stdout)
	}
}
