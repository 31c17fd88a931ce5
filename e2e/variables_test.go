package e2e

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	nomad "github.com/hashicorp/nomad/api"
)

// TestVariablesCLI writes, reads, lists and deletes variables with the
// CLI, check-and-set included, and checks that bad input is refused with
// a message and writes nothing.
func TestVariablesCLI(t *testing.T) {
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

	if r := ok("var", "put", "app/db", "user=admin", "password=s3cret"); !strings.Contains(r.stdout, `Wrote variable "app/db"`) {
		t.Fatalf("put: %s", r)
	}
	if r := ok("var", "get", "-item", "password", "app/db"); r.stdout != "s3cret\n" {
		t.Fatalf("get -item: %q", r.stdout)
	}
	r := ok("var", "get", "app/db")
	for _, want := range []string{"Path        = app/db", "Namespace   = default", "password = s3cret", "user     = admin"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("get does not show %q:\n%s", want, r.stdout)
		}
	}
	v, _, err := a.client(t).Variables().Read("app/db", nil)
	if err != nil {
		t.Fatal(err)
	}

	// Check-and-set: 0 means "only if it does not exist"; a stale index
	// is refused and changes nothing; the current one writes.
	refused("check-and-set on modify index 0 failed: it exists", "var", "put", "-check-index", "0", "app/db", "user=other")
	refused("check-and-set", "var", "put", "-check-index", "1", "app/db", "user=other")
	if r := ok("var", "get", "-item", "user", "app/db"); r.stdout != "admin\n" {
		t.Fatalf("a refused CAS changed the variable: %q", r.stdout)
	}
	ok("var", "put", "-check-index", u64s(v.ModifyIndex), "app/db", "user=root", "password=s3cret")
	if r := ok("var", "get", "-item", "user", "app/db"); r.stdout != "root\n" {
		t.Fatalf("CAS at the current index did not write: %q", r.stdout)
	}

	// Items from a file and from stdin-less specification files.
	dir := t.TempDir()
	cert := filepath.Join(dir, "cert.pem")
	if err := os.WriteFile(cert, []byte("-----BEGIN CERT-----\nabc\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	ok("var", "put", "app/tls", "cert=@"+cert)
	if r := ok("var", "get", "-item", "cert", "app/tls"); r.stdout != "-----BEGIN CERT-----\nabc\n\n" {
		t.Fatalf("item from a file: %q", r.stdout)
	}
	spec := filepath.Join(dir, "spec.nv.hcl")
	if err := os.WriteFile(spec, []byte("path = \"app/spec\"\nitems {\n  region = \"eu\"\n}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	ok("var", "put", "@"+spec)
	if r := ok("var", "get", "-item", "region", "app/spec"); r.stdout != "eu\n" {
		t.Fatalf("item from an HCL specification: %q", r.stdout)
	}

	r = ok("var", "list", "app/")
	for _, p := range []string{"app/db", "app/spec", "app/tls"} {
		if !strings.Contains(r.stdout, p) {
			t.Errorf("list does not show %s:\n%s", p, r.stdout)
		}
	}
	if r := ok("var", "list", "-per-page", "2", "app/"); !strings.Contains(r.stdout, "Next page token") {
		t.Errorf("a page of 2 out of 3 has no next token:\n%s", r.stdout)
	}

	// Bad input: clear errors, nothing written.
	refused(`contains ".."`, "var", "put", "app/../etc", "k=v")
	refused("at most 65536", "var", "put", "app/big", "k="+strings.Repeat("x", 70000))
	refused("reserved", "var", "put", "nomad/other", "k=v")
	if r := ok("var", "list"); strings.Contains(r.stdout, "etc") || strings.Contains(r.stdout, "app/big") {
		t.Fatalf("refused writes were stored:\n%s", r.stdout)
	}

	// A full rotation leaves every variable readable, encrypted with the
	// new key.
	ok("operator", "root", "keyring", "rotate", "-full")
	if r := ok("operator", "root", "keyring", "list"); strings.Count(r.stdout, " active ") != 1 || strings.Count(r.stdout, " inactive ") != 1 {
		t.Fatalf("keyring after a rotation:\n%s", r.stdout)
	}
	if r := ok("var", "get", "-item", "password", "app/db"); r.stdout != "s3cret\n" {
		t.Fatalf("after a full rotation: %q", r.stdout)
	}

	refused("check-and-set on modify index 1 failed", "var", "purge", "-check-index", "1", "app/db")
	ok("var", "purge", "app/db")
	refused("not found", "var", "get", "app/db")
}

// TestVariablesNomadClient drives variables with HashiCorp's own Go
// client: create, read, list, check-and-set updates and deletes, and the
// conflict it decodes.
func TestVariablesNomadClient(t *testing.T) {
	t.Parallel()
	a := startAgent(t)
	c, err := nomad.NewClient(&nomad.Config{Address: a.addr})
	if err != nil {
		t.Fatal(err)
	}
	vars := c.Variables()
	created, _, err := vars.Create(&nomad.Variable{Path: "nomad/jobs/web", Items: nomad.VariableItems{"port": "8080"}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if created.Namespace != "default" || created.ModifyIndex == 0 || created.Items["port"] != "8080" {
		t.Fatalf("created %+v", created)
	}
	if _, _, err := vars.CheckedCreate(&nomad.Variable{Path: "nomad/jobs/web", Items: nomad.VariableItems{"port": "1"}}, nil); !isCASConflict(err, created.ModifyIndex) {
		t.Fatalf("second CheckedCreate: %v", err)
	}
	stale := created.Copy()
	next := created.Copy()
	next.Items["port"] = "9090"
	updated, _, err := vars.CheckedUpdate(next, nil)
	if err != nil {
		t.Fatal(err)
	}
	stale.Items["port"] = "1"
	if _, _, err := vars.CheckedUpdate(stale, nil); !isCASConflict(err, updated.ModifyIndex) {
		t.Fatalf("update at a stale index: %v", err)
	}
	got, _, err := vars.Read("nomad/jobs/web", nil)
	if err != nil || got.Items["port"] != "9090" {
		t.Fatalf("read %+v, %v", got, err)
	}
	if _, _, err := vars.Read("nomad/jobs/none", nil); !errors.Is(err, nomad.ErrVariablePathNotFound) {
		t.Fatalf("read of a missing variable: %v", err)
	}
	list, _, err := vars.PrefixList("nomad/", nil)
	if err != nil || len(list) != 1 || list[0].Path != "nomad/jobs/web" || list[0].ModifyIndex != updated.ModifyIndex {
		t.Fatalf("list %+v, %v", list, err)
	}
	if _, err := vars.CheckedDelete("nomad/jobs/web", created.ModifyIndex, nil); !isCASConflict(err, updated.ModifyIndex) {
		t.Fatalf("delete at a stale index: %v", err)
	}
	if _, err := vars.CheckedDelete("nomad/jobs/web", updated.ModifyIndex, nil); err != nil {
		t.Fatal(err)
	}
	if list, _, _ := vars.List(nil); len(list) != 0 {
		t.Fatalf("after delete: %+v", list)
	}
	if _, _, err := vars.Create(&nomad.Variable{Path: "bad/var"}, nil); err == nil || !strings.Contains(err.Error(), "400 (variable missing required Items object)") {
		t.Fatalf("create without items: %v", err)
	}
}

// TestVariablesSurviveRestart: a persistent server keeps its key-
// encryption key in its data dir, so that variables read back after a
// restart, and no file of the data dir but that key holds a variable in
// the clear.
func TestVariablesSurviveRestart(t *testing.T) {
	t.Parallel()
	a := newPersistentAgent(t, "vars", roleServer)
	a.start(t)
	a.waitReady(t, surviveStartTimeout)
	const secret = "persisted-secret-value"
	if r := a.cli(t, "var", "put", "app/secret", "v="+secret); r.code != 0 {
		t.Fatalf("put: %s", r)
	}
	a.interrupt(t)
	kek := filepath.Join(a.dataDir, "server", "keyring.kek")
	if fi, err := os.Stat(kek); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("key-encryption key: %v, %v", fi, err)
	}
	err := filepath.WalkDir(a.dataDir, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if bytes.Contains(b, []byte(secret)) {
			t.Errorf("%s holds the variable in the clear", path)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	a.start(t)
	a.waitReady(t, surviveStartTimeout)
	if r := a.cli(t, "var", "get", "-item", "v", "app/secret"); r.code != 0 || r.stdout != secret+"\n" {
		t.Fatalf("after a restart: %s", r)
	}
}

func isCASConflict(err error, current uint64) bool {
	var ce nomad.ErrCASConflict
	return errors.As(err, &ce) && ce.Conflict != nil && ce.Conflict.ModifyIndex == current
}

func u64s(n uint64) string { return strconv.FormatUint(n, 10) }
