package command

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/drover-io/drover/api"
)

// fakeNamespaceAgent serves the namespace endpoints over one map and
// records the ?namespace= of every request.
type fakeNamespaceAgent struct {
	*fakeAgent
	mu      sync.Mutex // guards the fields below
	ns      map[string]*api.Namespace
	queryNS []string
}

func newFakeNamespaceAgent(t *testing.T) *fakeNamespaceAgent {
	f := &fakeNamespaceAgent{fakeAgent: newFakeAgent(t),
		ns: map[string]*api.Namespace{"default": {Name: "default", Description: "Default shared namespace"}}}
	f.mux.HandleFunc("GET /v1/namespaces", func(w http.ResponseWriter, r *http.Request) {
		f.mu.Lock()
		defer f.mu.Unlock()
		var out []*api.Namespace
		for _, k := range sortedKeys(f.ns) {
			out = append(out, f.ns[k])
		}
		_ = json.NewEncoder(w).Encode(out)
	})
	f.mux.HandleFunc("GET /v1/namespace/{name}", func(w http.ResponseWriter, r *http.Request) {
		f.mu.Lock()
		defer f.mu.Unlock()
		ns := f.ns[r.PathValue("name")]
		if ns == nil {
			http.Error(w, "namespace not found", http.StatusNotFound)
			return
		}
		_ = json.NewEncoder(w).Encode(ns)
	})
	f.mux.HandleFunc("PUT /v1/namespace/{name}", func(w http.ResponseWriter, r *http.Request) {
		var ns api.Namespace
		if err := json.NewDecoder(r.Body).Decode(&ns); err != nil || ns.Name != r.PathValue("name") {
			http.Error(w, "bad namespace", http.StatusBadRequest)
			return
		}
		if ns.Quota != "" {
			http.Error(w, "quota: resource quotas are not supported by drover", http.StatusBadRequest)
			return
		}
		f.mu.Lock()
		defer f.mu.Unlock()
		f.ns[ns.Name] = &ns
	})
	f.mux.HandleFunc("DELETE /v1/namespace/{name}", func(w http.ResponseWriter, r *http.Request) {
		name := r.PathValue("name")
		if name == "busy" {
			http.Error(w, `namespace "busy" has jobs that are not dead (web): stop them first`, http.StatusConflict)
			return
		}
		f.mu.Lock()
		defer f.mu.Unlock()
		delete(f.ns, name)
	})
	f.mux.HandleFunc("GET /v1/jobs", func(w http.ResponseWriter, r *http.Request) {
		f.mu.Lock()
		f.queryNS = append(f.queryNS, r.URL.Query().Get("namespace"))
		f.mu.Unlock()
		_, _ = io.WriteString(w, "[]")
	})
	return f
}

func (f *fakeNamespaceAgent) get(name string) *api.Namespace {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.ns[name]
}

func TestNamespaceCommands(t *testing.T) {
	f := newFakeNamespaceAgent(t)
	addr := f.srv.URL
	r := runCLI(t, addr, nil, "namespace", "apply", "-description", "developers", "dev")
	if r.code != 0 || r.stdout != "Successfully applied namespace \"dev\"!\n" {
		t.Fatalf("apply by name: %+v", r)
	}
	// Applying by name again keeps what the flags do not set.
	f.mu.Lock()
	f.ns["dev"].Meta = map[string]string{"team": "a"}
	f.mu.Unlock()
	if r := runCLI(t, addr, nil, "namespace", "apply", "dev"); r.code != 0 {
		t.Fatalf("apply again: %+v", r)
	}
	if got := f.get("dev"); got.Description != "developers" || got.Meta["team"] != "a" {
		t.Fatalf("dev after a second apply: %+v", got)
	}

	r = runCLI(t, addr, nil, "namespace", "list")
	want := "Name     Description\ndefault  Default shared namespace\ndev      developers\n"
	if r.code != 0 || r.stdout != want {
		t.Fatalf("list:\n%s\nwant:\n%s\n%s", r.stdout, want, r.stderr)
	}
	r = runCLI(t, addr, nil, "namespace", "list", "-json")
	var listed []*api.Namespace
	if err := json.Unmarshal([]byte(r.stdout), &listed); err != nil || len(listed) != 2 {
		t.Fatalf("list -json: %q, %v", r.stdout, err)
	}
	r = runCLI(t, addr, nil, "namespace", "list", "-t", "{{range .}}{{.Name}};{{end}}")
	if r.code != 0 || r.stdout != "default;dev;" {
		t.Fatalf("list -t: %+v", r)
	}

	r = runCLI(t, addr, nil, "namespace", "status", "dev")
	for _, s := range []string{"Name        = dev\n", "Description = developers\n", "Quota       = <none>\n", "Metadata\nteam = a\n"} {
		if !strings.Contains(r.stdout, s) {
			t.Errorf("status lacks %q:\n%s", s, r.stdout)
		}
	}
	if r := runCLI(t, addr, nil, "namespace", "status", "nope"); r.code != 1 || !strings.Contains(r.stderr, `namespace "nope" not found`) {
		t.Errorf("status of an unknown namespace: %+v", r)
	}

	if r := runCLI(t, addr, nil, "namespace", "delete", "dev"); r.code != 0 || r.stdout != "Successfully deleted namespace \"dev\"!\n" {
		t.Errorf("delete: %+v", r)
	}
	if f.get("dev") != nil {
		t.Error("dev still exists")
	}
	if r := runCLI(t, addr, nil, "namespace", "delete", "busy"); r.code != 1 || !strings.Contains(r.stderr, "has jobs that are not dead") {
		t.Errorf("delete refused: %+v", r)
	}
	if r := runCLI(t, addr, nil, "namespace", "apply", "-quota", "q", "dev"); r.code != 1 || !strings.Contains(r.stderr, "resource quotas are not supported") {
		t.Errorf("apply with a quota: %+v", r)
	}
	if r := runCLI(t, addr, nil, "namespace", "apply", "bad.name"); r.code != 1 || !strings.Contains(r.stderr, "bad.name") {
		t.Errorf("apply of a missing file: %+v", r)
	}
}

func TestNamespaceApplyFile(t *testing.T) {
	f := newFakeNamespaceAgent(t)
	path := filepath.Join(t.TempDir(), "ns.hcl")
	src := `name        = "prod"
description = "production"
capabilities {
  enabled_task_drivers   = ["docker", "exec"]
  disabled_network_modes = ["host"]
}
meta {
  owner = "ops"
}
`
	if err := os.WriteFile(path, []byte(src), 0o600); err != nil {
		t.Fatal(err)
	}
	if r := runCLI(t, f.srv.URL, nil, "namespace", "apply", path); r.code != 0 {
		t.Fatalf("apply file: %+v", r)
	}
	got := f.get("prod")
	if got == nil || got.Description != "production" || got.Meta["owner"] != "ops" || got.Capabilities == nil ||
		!slices.Equal(got.Capabilities.EnabledTaskDrivers, []string{"docker", "exec"}) ||
		!slices.Equal(got.Capabilities.DisabledNetworkModes, []string{"host"}) {
		t.Fatalf("applied %+v", got)
	}
	// JSON from stdin.
	var stdout, stderr bytes.Buffer
	d := deps{now: func() time.Time { return fixedNow }, readFile: os.ReadFile,
		getenv: func(k string) string {
			if k == "DROVER_ADDR" {
				return f.srv.URL
			}
			return ""
		},
		stdin: strings.NewReader(`{"Name":"qa","Description":"from stdin"}`),
	}
	if code := run([]string{"namespace", "apply", "-json", "-"}, newMeta(&stdout, &stderr, d)); code != 0 {
		t.Fatalf("apply -json -: exit %d: %s", code, stderr.String())
	}
	if got := f.get("qa"); got == nil || got.Description != "from stdin" {
		t.Fatalf("applied from stdin: %+v", got)
	}
}

func TestParseNamespaceSpecHCL(t *testing.T) {
	for _, tc := range []struct{ name, src, err string }{
		{"no name", `description = "x"`, "name is missing"},
		{"unknown argument", "name = \"a\"\nquotas = \"x\"\n", "quotas"},
		{"unknown capability", "name = \"a\"\ncapabilities {\n  enabled_drivers = [\"docker\"]\n}\n", "enabled_drivers is not an argument"},
		{"driver not a list", "name = \"a\"\ncapabilities {\n  enabled_task_drivers = \"docker\"\n}\n", "must be a list of strings"},
		{"vault kept for the server to refuse", "name = \"a\"\nvault {\n  default = \"v\"\n}\n", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ns, err := parseNamespaceSpecHCL("ns.hcl", []byte(tc.src))
			if tc.err == "" {
				if err != nil || ns.VaultConfiguration == nil || ns.VaultConfiguration.Default != "v" {
					t.Fatalf("got %+v, %v", ns, err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Fatalf("err = %v, want %q", err, tc.err)
			}
		})
	}
}

// TestJobCommandsNamespace: -namespace, else NOMAD_NAMESPACE, chooses the
// namespace of job commands.
func TestJobCommandsNamespace(t *testing.T) {
	f := newFakeNamespaceAgent(t)
	env := func(vars map[string]string) deps {
		return deps{now: func() time.Time { return fixedNow }, readFile: os.ReadFile,
			getenv: func(k string) string {
				if k == "DROVER_ADDR" {
					return f.srv.URL
				}
				return vars[k]
			}}
	}
	for _, tc := range []struct {
		args []string
		env  map[string]string
		want string
	}{
		{[]string{"job", "status"}, nil, ""},
		{[]string{"job", "status", "-namespace", "dev"}, nil, "dev"},
		{[]string{"job", "status"}, map[string]string{"NOMAD_NAMESPACE": "qa"}, "qa"},
		{[]string{"job", "status", "-namespace", "*"}, map[string]string{"NOMAD_NAMESPACE": "qa"}, "*"},
		{[]string{"-namespace", "ops", "job", "status"}, nil, "ops"},
	} {
		var stdout, stderr bytes.Buffer
		if code := run(tc.args, newMeta(&stdout, &stderr, env(tc.env))); code != 0 {
			t.Fatalf("%v: exit %d: %s", tc.args, code, stderr.String())
		}
		f.mu.Lock()
		got := f.queryNS[len(f.queryNS)-1]
		f.mu.Unlock()
		if got != tc.want {
			t.Errorf("%v with %v sent namespace %q, want %q", tc.args, tc.env, got, tc.want)
		}
	}
}
