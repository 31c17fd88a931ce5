package template

import (
	"context"
	"errors"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/drover-io/drover/rpcapi"
	"github.com/drover-io/drover/structs"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m,
		// The HTTP transport of consul-template's Nomad client keeps idle
		// connections' goroutines until they time out.
		goleak.IgnoreTopFunction("net/http.(*persistConn).readLoop"),
		goleak.IgnoreTopFunction("net/http.(*persistConn).writeLoop"),
		goleak.IgnoreTopFunction("internal/poll.runtime_pollWait"),
	)
}

// fakeVars is the servers' variables: a blocking query waits for a write.
type fakeVars struct {
	mu      sync.Mutex // guards the fields below
	index   uint64
	vars    map[string]structs.VariableItems
	changed chan struct{}
}

func newFakeVars() *fakeVars {
	return &fakeVars{index: 1, vars: map[string]structs.VariableItems{}, changed: make(chan struct{})}
}

func (f *fakeVars) put(path string, items structs.VariableItems) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.index++
	f.vars[path] = items
	close(f.changed)
	f.changed = make(chan struct{})
}

// wait blocks while the index is at most min, as a blocking query does.
func (f *fakeVars) wait(ctx context.Context, opts structs.QueryOptions) uint64 {
	for {
		f.mu.Lock()
		idx, ch := f.index, f.changed
		f.mu.Unlock()
		if opts.MinQueryIndex < idx || opts.MinQueryIndex == 0 {
			return idx
		}
		t := time.NewTimer(opts.MaxQueryTime)
		select {
		case <-ch:
			t.Stop()
		case <-t.C:
			return idx
		case <-ctx.Done():
			t.Stop()
			return idx
		}
	}
}

func (f *fakeVars) Invoke(ctx context.Context, m *rpcapi.Info, req any) (any, error) {
	switch m {
	case rpcapi.VarGet.Info():
		r := req.(*structs.VariablesReadRequest)
		idx := f.wait(ctx, r.QueryOptions)
		f.mu.Lock()
		defer f.mu.Unlock()
		resp := &structs.VariablesReadResponse{QueryMeta: structs.QueryMeta{Index: idx, KnownLeader: true}}
		if items, ok := f.vars[r.Path]; ok {
			resp.Data = &structs.VariableDecrypted{
				VariableMetadata: structs.VariableMetadata{Namespace: r.Namespace, Path: r.Path, ModifyIndex: idx},
				Items:            items,
			}
		}
		return resp, nil
	case rpcapi.VarList.Info():
		r := req.(*structs.VariablesListRequest)
		idx := f.wait(ctx, r.QueryOptions)
		f.mu.Lock()
		defer f.mu.Unlock()
		resp := &structs.VariablesListResponse{QueryMeta: structs.QueryMeta{Index: idx, KnownLeader: true}}
		for _, p := range slices.Sorted(maps.Keys(f.vars)) { // in path order, as the servers list
			if strings.HasPrefix(p, r.Prefix) {
				resp.Data = append(resp.Data, &structs.VariableMetadata{Namespace: r.Namespace, Path: p})
			}
		}
		return resp, nil
	}
	return nil, errors.New("unexpected method " + m.Name())
}

var webIdentity = structs.WorkloadIdentity{Namespace: "default", JobID: "web", Group: "g", Task: "t"}

func newManager(t *testing.T, vars *fakeVars, running bool, tmpls ...*structs.Template) (*Manager, string) {
	t.Helper()
	dir := t.TempDir()
	for _, tm := range tmpls {
		tm.Canonicalize()
	}
	m, err := New(Config{
		RPC: vars, Identity: webIdentity, TaskDir: dir, Templates: tmpls, Running: running,
		Env: map[string]string{"NOMAD_TASK_NAME": "t"},
	})
	if err != nil {
		t.Fatal(err)
	}
	m.Start()
	t.Cleanup(m.Stop)
	return m, dir
}

// waitRendered waits for the first render, failing after a bound that
// only a hung render reaches.
func waitRendered(t *testing.T, m *Manager, missing func([]string)) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if missing == nil {
		missing = func([]string) {}
	}
	if err := m.WaitRendered(ctx, 0, missing); err != nil {
		t.Fatalf("WaitRendered: %v", err)
	}
}

func readFile(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func nextChange(t *testing.T, m *Manager) Change {
	t.Helper()
	select {
	case c := <-m.Changes():
		return c
	case err := <-m.Failed():
		t.Fatalf("render failed: %v", err)
	case <-time.After(60 * time.Second):
		t.Fatal("no change reported")
	}
	return Change{}
}

func TestManagerRendersVariableAndEnv(t *testing.T) {
	t.Setenv("DROVER_AGENT_SECRET", "agent-only")
	vars := newFakeVars()
	vars.put("nomad/jobs/web", structs.VariableItems{"password": "s3cret"})
	m, dir := newManager(t, vars, false, &structs.Template{
		EmbeddedTmpl: `{{ with nomadVar "nomad/jobs/web" }}pw={{ .password }}{{ end }}
task={{ env "NOMAD_TASK_NAME" }} agent={{ env "DROVER_AGENT_SECRET" }} {{ "a,b" | split "," | toJSON }}`,
		DestPath: "local/app.conf", Perms: "0600",
	})
	waitRendered(t, m, nil)
	got := readFile(t, filepath.Join(dir, "local/app.conf"))
	if want := "pw=s3cret\ntask=t agent= [\"a\",\"b\"]"; got != want {
		t.Fatalf("rendered %q, want %q", got, want)
	}
	fi, err := os.Stat(filepath.Join(dir, "local/app.conf"))
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("perms = %v (%v), want 0600", fi.Mode().Perm(), err)
	}
}

func TestManagerWaitsForMissingVariableThenRerenders(t *testing.T) {
	vars := newFakeVars()
	m, dir := newManager(t, vars, false, &structs.Template{
		EmbeddedTmpl: `{{ with nomadVar "nomad/jobs/web/g" }}v={{ .v }}{{ end }}`, DestPath: "local/v",
	})
	reported := make(chan []string, 10)
	done := make(chan error, 1)
	go func() {
		done <- m.WaitRendered(context.Background(), 0, func(s []string) { reported <- s })
	}()
	select {
	case s := <-reported:
		if len(s) != 1 || s[0] != `nomadVar "nomad/jobs/web/g"` {
			t.Fatalf("missing = %q", s)
		}
	case <-time.After(60 * time.Second):
		t.Fatal("missing variable never reported")
	}
	vars.put("nomad/jobs/web/g", structs.VariableItems{"v": "1"})
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if got := readFile(t, filepath.Join(dir, "local/v")); got != "v=1" {
		t.Fatalf("rendered %q", got)
	}
	vars.put("nomad/jobs/web/g", structs.VariableItems{"v": "2"})
	if c := nextChange(t, m); c.Index != 0 {
		t.Fatalf("change = %+v", c)
	}
	if got := readFile(t, filepath.Join(dir, "local/v")); got != "v=2" {
		t.Fatalf("re-rendered %q", got)
	}
}

func TestManagerRunningTaskUnchangedIsNoChange(t *testing.T) {
	vars := newFakeVars()
	vars.put("nomad/jobs/web", structs.VariableItems{"v": "1"})
	tmpl := func() *structs.Template {
		return &structs.Template{EmbeddedTmpl: `{{ with nomadVar "nomad/jobs/web" }}{{ .v }}{{ end }}`, DestPath: "local/v"}
	}
	// The task's first start rendered the file.
	m, dir := newManager(t, vars, false, tmpl())
	waitRendered(t, m, nil)
	m.Stop()

	// The agent restarted and found the task running: the file holds
	// what renders, so nothing changed.
	m2, err := New(Config{RPC: vars, Identity: webIdentity, TaskDir: dir, Templates: []*structs.Template{withDefaults(tmpl())}, Running: true})
	if err != nil {
		t.Fatal(err)
	}
	m2.Start()
	defer m2.Stop()
	waitRendered(t, m2, nil)
	select {
	case c := <-m2.Changes():
		t.Fatalf("unchanged content reported as change %+v", c)
	default:
	}
	// While it was down, the variable changed: the first render is a change.
	m2.Stop()
	vars.put("nomad/jobs/web", structs.VariableItems{"v": "2"})
	m3, err := New(Config{RPC: vars, Identity: webIdentity, TaskDir: dir, Templates: []*structs.Template{withDefaults(tmpl())}, Running: true})
	if err != nil {
		t.Fatal(err)
	}
	m3.Start()
	defer m3.Stop()
	waitRendered(t, m3, nil)
	if c := nextChange(t, m3); c.Index != 0 {
		t.Fatalf("change = %+v", c)
	}
}

func withDefaults(t *structs.Template) *structs.Template {
	t.Canonicalize()
	return t
}

func TestManagerRefusesOtherJobsVariables(t *testing.T) {
	vars := newFakeVars()
	vars.put("nomad/jobs/other", structs.VariableItems{"v": "1"})
	m, _ := newManager(t, vars, false, &structs.Template{
		EmbeddedTmpl: `{{ with nomadVar "nomad/jobs/other" }}{{ .v }}{{ end }}`, DestPath: "local/v",
	})
	reported := make(chan []string, 100)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- m.WaitRendered(ctx, 0, func(s []string) { reported <- s }) }()
	deadline := time.After(60 * time.Second)
	for {
		select {
		case s := <-reported:
			if len(s) == 1 && strings.Contains(s[0], "Permission denied") {
				cancel()
				<-done
				return
			}
		case err := <-done:
			t.Fatalf("WaitRendered returned %v: another job's variable rendered", err)
		case <-deadline:
			t.Fatal("refusal never reported")
		}
	}
}

func TestManagerVarListFiltered(t *testing.T) {
	vars := newFakeVars()
	vars.put("nomad/jobs/web", structs.VariableItems{"a": "1"})
	vars.put("nomad/jobs/web-other", structs.VariableItems{"b": "2"})
	vars.put("nomad/jobs/web/g/t", structs.VariableItems{"c": "3"})
	m, dir := newManager(t, vars, false, &structs.Template{
		EmbeddedTmpl: `{{ range nomadVarList "nomad/jobs/web" }}{{ .Path }};{{ end }}`, DestPath: "local/list",
	})
	waitRendered(t, m, nil)
	if got := readFile(t, filepath.Join(dir, "local/list")); got != "nomad/jobs/web;nomad/jobs/web/g/t;" {
		t.Fatalf("rendered %q", got)
	}
}

func TestManagerDoesNotFollowLinks(t *testing.T) {
	vars := newFakeVars()
	outside := t.TempDir()
	dir := t.TempDir()
	if err := os.Symlink(outside, filepath.Join(dir, "local")); err != nil {
		t.Fatal(err)
	}
	tm := withDefaults(&structs.Template{EmbeddedTmpl: "x", DestPath: "local/f"})
	m, err := New(Config{RPC: vars, Identity: webIdentity, TaskDir: dir, Templates: []*structs.Template{tm}})
	if err != nil {
		t.Fatal(err)
	}
	m.Start()
	defer m.Stop()
	err = m.WaitRendered(context.Background(), time.Hour, func([]string) {})
	if err == nil || !strings.Contains(err.Error(), "local/f") {
		t.Fatalf("WaitRendered = %v, want an error naming the destination", err)
	}
	if _, err := os.Stat(filepath.Join(outside, "f")); err == nil {
		t.Fatal("rendered through a link out of the task directory")
	}
}

func TestParseEnv(t *testing.T) {
	got, err := ParseEnv([]byte("# c\nA=1\nexport B = two \nC=\"x\\ny\"\nD='$HOME'\n\n"))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"A": "1", "B": "two", "C": "x\ny", "D": "$HOME"}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %q, want %q", k, got[k], v)
		}
	}
	if _, err := ParseEnv([]byte("not a pair\n")); err == nil {
		t.Error("ParseEnv accepted a line without =")
	}
}

func TestManagerOnceRendersOnce(t *testing.T) {
	vars := newFakeVars()
	vars.put("nomad/jobs/web", structs.VariableItems{"v": "1"})
	m, dir := newManager(t, vars, false, &structs.Template{
		EmbeddedTmpl: `{{ with nomadVar "nomad/jobs/web" }}{{ .v }}{{ end }}`, DestPath: "local/v", Once: true,
	}, &structs.Template{
		EmbeddedTmpl: `{{ with nomadVar "nomad/jobs/web" }}{{ .v }}{{ end }}`, DestPath: "local/w",
	})
	waitRendered(t, m, nil)
	vars.put("nomad/jobs/web", structs.VariableItems{"v": "2"})
	// The other template re-renders; the once template does not.
	if c := nextChange(t, m); c.Index != 1 {
		t.Fatalf("change = %+v, want the second template's", c)
	}
	if got := readFile(t, filepath.Join(dir, "local/v")); got != "1" {
		t.Fatalf("the once template re-rendered: %q", got)
	}
}

func TestManagerTemplateOptions(t *testing.T) {
	cases := []struct {
		name    string
		tmpl    *structs.Template
		source  string // written to local/src.tpl first
		client  *ClientConfig
		want    string // rendered; "" with wantErr
		wantErr string
	}{
		{name: "source file", tmpl: &structs.Template{SourcePath: "local/src.tpl", DestPath: "local/out"},
			source: `from {{ env "NOMAD_TASK_NAME" }}`, want: "from t"},
		{name: "delimiters", tmpl: &structs.Template{EmbeddedTmpl: `{{ keep }} [[ env "NOMAD_TASK_NAME" ]]`,
			DestPath: "local/out", LeftDelim: "[[", RightDelim: "]]"}, want: "{{ keep }} t"},
		{name: "error on missing key", tmpl: &structs.Template{EmbeddedTmpl: `{{ $m := parseJSON "{}" }}{{ $m.nope }}`,
			DestPath: "local/out", ErrMissingKey: true}, wantErr: "nope"},
		{name: "missing key renders no value", tmpl: &structs.Template{EmbeddedTmpl: `{{ $m := parseJSON "{}" }}[{{ $m.nope }}]`,
			DestPath: "local/out"}, want: "[<no value>]"},
		{name: "denied by default", tmpl: &structs.Template{EmbeddedTmpl: `{{ writeToFile "/tmp/x" "" "" "0644" "x" }}`,
			DestPath: "local/out"}, wantErr: "writeToFile"},
		{name: "denied by the agent", tmpl: &structs.Template{EmbeddedTmpl: `{{ sprig_upper "x" }}`, DestPath: "local/out"},
			client: &ClientConfig{FunctionDenylist: []string{"sprig_*"}}, wantErr: "sprig_upper"},
		{name: "file outside the sandbox", tmpl: &structs.Template{EmbeddedTmpl: `{{ file "/etc/hostname" }}`, DestPath: "local/out"},
			wantErr: "outside of sandbox"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			if tc.source != "" {
				if err := os.MkdirAll(filepath.Join(dir, "local"), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(dir, "local/src.tpl"), []byte(tc.source), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			m, err := New(Config{RPC: newFakeVars(), Identity: webIdentity, TaskDir: dir, Client: tc.client,
				Templates: []*structs.Template{withDefaults(tc.tmpl)}, Env: map[string]string{"NOMAD_TASK_NAME": "t"}})
			if err != nil {
				t.Fatal(err)
			}
			m.Start()
			defer m.Stop()
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			err = m.WaitRendered(ctx, time.Hour, func([]string) {})
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("WaitRendered = %v, want an error with %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := readFile(t, filepath.Join(dir, "local/out")); got != tc.want {
				t.Fatalf("rendered %q, want %q", got, tc.want)
			}
		})
	}
}
