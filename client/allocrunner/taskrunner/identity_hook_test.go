package taskrunner

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/drover-io/drover/client/allocdir"
	"github.com/drover-io/drover/client/taskapi"
	"github.com/drover-io/drover/structs"
)

// fakeSigner signs "jwt-<task>-<name>" for every identity of the task.
type fakeSigner struct {
	task *structs.Task
	err  error
}

func (f *fakeSigner) SignIdentities(_ context.Context, _, task string) ([]*structs.SignedIdentity, error) {
	if f.err != nil {
		return nil, f.err
	}
	var out []*structs.SignedIdentity
	for _, id := range structs.TaskIdentities(f.task) {
		out = append(out, &structs.SignedIdentity{Name: id.IdentityName(), JWT: "jwt-" + task + "-" + id.IdentityName()})
	}
	return out, nil
}

// builtTaskDir returns a built task directory of a new alloc directory.
func builtTaskDir(t *testing.T, task string) *allocdir.TaskDir {
	t.Helper()
	ad := allocdir.New(t.TempDir(), "a1")
	if err := ad.Build(); err != nil {
		t.Fatal(err)
	}
	td := ad.NewTaskDir(task)
	if err := td.Build(); err != nil {
		t.Fatal(err)
	}
	return td
}

func TestIdentityHook(t *testing.T) {
	tests := []struct {
		name      string
		task      *structs.Task
		signErr   error
		wantEnv   map[string]string
		wantFiles map[string]string
		wantErr   string
	}{
		{name: "no identity block: nothing exposed", task: &structs.Task{Name: "t"}},
		{name: "env and file", task: &structs.Task{Name: "t", Identity: &structs.TaskIdentity{Env: true, File: true}},
			wantEnv:   map[string]string{"NOMAD_TOKEN": "jwt-t-default"},
			wantFiles: map[string]string{"secrets/nomad_token": "jwt-t-default"}},
		{name: "named identities", task: &structs.Task{Name: "t", Identities: []*structs.TaskIdentity{
			{Name: "vault", Env: true, File: true}, {Name: "oidc", File: true, Filepath: "local/oidc.jwt"}, {Name: "hidden"}}},
			wantEnv: map[string]string{"NOMAD_TOKEN_vault": "jwt-t-vault"},
			wantFiles: map[string]string{"secrets/nomad_vault.jwt": "jwt-t-vault", "local/oidc.jwt": "jwt-t-oidc",
				"secrets/nomad_token": "", "secrets/nomad_hidden.jwt": ""}},
		{name: "the servers refuse", task: &structs.Task{Name: "t", Identity: &structs.TaskIdentity{Env: true}},
			signErr: errors.New("Permission denied"), wantErr: "Permission denied"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			td := builtTaskDir(t, tt.task.Name)
			h := &identityHook{signer: &fakeSigner{task: tt.task, err: tt.signErr}}
			var resp PrestartResponse
			err := h.Prestart(context.Background(), &PrestartRequest{Alloc: &structs.Allocation{ID: "a1"}, Task: tt.task, TaskDir: td}, &resp)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("Prestart = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(resp.Env) != len(tt.wantEnv) {
				t.Errorf("env %v, want %v", resp.Env, tt.wantEnv)
			}
			for k, v := range tt.wantEnv {
				if resp.Env[k] != v {
					t.Errorf("env %s = %q, want %q", k, resp.Env[k], v)
				}
			}
			for rel, want := range tt.wantFiles {
				b, err := os.ReadFile(filepath.Join(td.Dir, rel))
				if want == "" {
					if !os.IsNotExist(err) {
						t.Errorf("%s exists (%q, %v), want none", rel, b, err)
					}
					continue
				}
				if err != nil || string(b) != want {
					t.Errorf("%s = %q, %v; want %q", rel, b, err, want)
				}
			}
		})
	}
}

// TestIdentityHookReplacesLink checks that a link the task planted where
// its token goes is replaced, not followed.
func TestIdentityHookReplacesLink(t *testing.T) {
	task := &structs.Task{Name: "t", Identity: &structs.TaskIdentity{File: true}}
	td := builtTaskDir(t, "t")
	outside := filepath.Join(t.TempDir(), "host-file")
	if err := os.WriteFile(outside, []byte("host"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(td.SecretsDir, "nomad_token")); err != nil {
		t.Fatal(err)
	}
	h := &identityHook{signer: &fakeSigner{task: task}}
	if err := h.Prestart(context.Background(), &PrestartRequest{Alloc: &structs.Allocation{ID: "a1"}, Task: task, TaskDir: td}, &PrestartResponse{}); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(outside); string(b) != "host" {
		t.Fatalf("the host file was written through the link: %q", b)
	}
	if fi, err := os.Lstat(filepath.Join(td.SecretsDir, "nomad_token")); err != nil || !fi.Mode().IsRegular() {
		t.Fatalf("nomad_token: %v, %v", fi, err)
	}
	// A filepath out of the task directory is refused.
	bad := &structs.Task{Name: "t", Identity: &structs.TaskIdentity{File: true, Filepath: "../../escape"}}
	h = &identityHook{signer: &fakeSigner{task: bad}}
	if err := h.Prestart(context.Background(), &PrestartRequest{Alloc: &structs.Allocation{ID: "a1"}, Task: bad, TaskDir: td}, &PrestartResponse{}); err == nil {
		t.Fatal("a filepath out of the task directory was written")
	}
}

func TestIdentityHookWithoutSigner(t *testing.T) {
	task := &structs.Task{Name: "t", Identity: &structs.TaskIdentity{Env: true}}
	err := (&identityHook{}).Prestart(context.Background(), &PrestartRequest{Alloc: &structs.Allocation{ID: "a1"}, Task: task, TaskDir: builtTaskDir(t, "t")}, &PrestartResponse{})
	if err == nil || !strings.Contains(err.Error(), "cannot have identities signed") {
		t.Fatalf("Prestart = %v", err)
	}
}

func TestTaskAPIHook(t *testing.T) {
	var gotToken, gotPath string
	agent := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		gotToken, gotPath = r.Header.Get("X-Nomad-Token"), r.URL.Path
		_, _ = io.WriteString(w, "agent says hi")
	}))
	defer agent.Close()
	// A short directory: a Unix socket's path is at most 107 bytes.
	dir, err := os.MkdirTemp("", "tapi")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	ad := allocdir.New(dir, "a1")
	if err := ad.Build(); err != nil {
		t.Fatal(err)
	}
	td := ad.NewTaskDir("t")
	if err := td.Build(); err != nil {
		t.Fatal(err)
	}
	h := &taskAPIHook{api: newTaskAPI(t, agent.URL, nil), logger: slog.New(slog.DiscardHandler)}
	var resp PrestartResponse
	if err := h.Prestart(context.Background(), &PrestartRequest{Task: &structs.Task{Name: "t"}, TaskDir: td}, &resp); err != nil {
		t.Fatal(err)
	}
	defer h.Stop()
	sock := filepath.Join(td.SecretsDir, TaskAPISocketName)
	if resp.Env["NOMAD_UNIX_ADDR"] != "unix://"+sock {
		t.Fatalf("NOMAD_UNIX_ADDR = %q", resp.Env["NOMAD_UNIX_ADDR"])
	}
	// A second start keeps the socket.
	if err := h.Prestart(context.Background(), &PrestartRequest{Task: &structs.Task{Name: "t"}, TaskDir: td}, &PrestartResponse{}); err != nil {
		t.Fatal(err)
	}
	client := &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, "unix", sock)
	}}}
	defer client.CloseIdleConnections()
	get := func(token string) (int, string) {
		req, _ := http.NewRequest("GET", "http://task-api/v1/var/nomad/jobs/web", nil)
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		r, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer r.Body.Close()
		b, _ := io.ReadAll(r.Body)
		return r.StatusCode, string(b)
	}
	if code, body := get(""); code != http.StatusForbidden || !strings.Contains(body, "needs a token") {
		t.Errorf("without a token: %d %q", code, body)
	}
	if code, body := get("tok"); code != 200 || body != "agent says hi" || gotPath != "/v1/var/nomad/jobs/web" || gotToken != "" {
		t.Errorf("with a token: %d %q (agent saw %q, X-Nomad-Token %q)", code, body, gotPath, gotToken)
	}
	h.Stop()
	if _, err := os.Lstat(sock); !os.IsNotExist(err) {
		t.Errorf("the socket outlives Stop: %v", err)
	}
}

// renewingSigner signs tokens that expire ttl after the (fake) now and
// counts its calls.
type renewingSigner struct {
	mu    sync.Mutex // guards n
	n     int
	ttl   time.Duration
	names []string
}

func (s *renewingSigner) SignIdentities(context.Context, string, string) ([]*structs.SignedIdentity, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.n++
	var out []*structs.SignedIdentity
	for _, name := range s.names {
		out = append(out, &structs.SignedIdentity{Name: name, JWT: fmt.Sprintf("jwt-%s-%d", name, s.n), Expiry: time.Now().Add(s.ttl).Unix()})
	}
	return out, nil
}

// TestIdentityHookRenews checks that a file identity with a ttl is
// rewritten halfway to its expiry, and that Stop ends the renewal.
func TestIdentityHookRenews(t *testing.T) {
	td := builtTaskDir(t, "t")
	synctest.Test(t, func(t *testing.T) {
		task := &structs.Task{Name: "t", Identities: []*structs.TaskIdentity{{Name: "ext", File: true, TTL: time.Hour}}}
		signer := &renewingSigner{ttl: time.Hour, names: []string{"default", "ext"}}
		h := &identityHook{signer: signer}
		if err := h.Prestart(context.Background(), &PrestartRequest{Alloc: &structs.Allocation{ID: "a1"}, Task: task, TaskDir: td}, &PrestartResponse{}); err != nil {
			t.Fatal(err)
		}
		file := filepath.Join(td.SecretsDir, "nomad_ext.jwt")
		read := func() string {
			b, _ := os.ReadFile(file)
			return string(b)
		}
		if got := read(); got != "jwt-ext-1" {
			t.Fatalf("first token %q", got)
		}
		time.Sleep(29 * time.Minute)
		synctest.Wait()
		if got := read(); got != "jwt-ext-1" {
			t.Fatalf("renewed before the half-life: %q", got)
		}
		time.Sleep(2 * time.Minute)
		synctest.Wait()
		if got := read(); got != "jwt-ext-2" {
			t.Fatalf("after the half-life: %q, want the renewed token", got)
		}
		time.Sleep(31 * time.Minute)
		synctest.Wait()
		if got := read(); got != "jwt-ext-3" {
			t.Fatalf("second renewal: %q", got)
		}
		h.Stop()
		time.Sleep(2 * time.Hour)
		synctest.Wait()
		if got := read(); got != "jwt-ext-3" {
			t.Fatalf("renewed after Stop: %q", got)
		}
	})
}

// TestTaskAPIHookHTTPSAgent: the task API forwards to an agent serving
// HTTPS (tls.http) with the transport the client gives it.
func TestTaskAPIHookHTTPSAgent(t *testing.T) {
	agent := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, "agent says hi over TLS")
	}))
	defer agent.Close()
	dir, err := os.MkdirTemp("", "tapi")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	ad := allocdir.New(dir, "a1")
	if err := ad.Build(); err != nil {
		t.Fatal(err)
	}
	td := ad.NewTaskDir("t")
	if err := td.Build(); err != nil {
		t.Fatal(err)
	}
	h := &taskAPIHook{api: newTaskAPI(t, agent.URL, agent.Client().Transport), logger: slog.New(slog.DiscardHandler)}
	if err := h.Prestart(context.Background(), &PrestartRequest{Task: &structs.Task{Name: "t"}, TaskDir: td}, &PrestartResponse{}); err != nil {
		t.Fatal(err)
	}
	defer h.Stop()
	sock := filepath.Join(td.SecretsDir, TaskAPISocketName)
	client := &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, "unix", sock)
	}}}
	defer client.CloseIdleConnections()
	req, _ := http.NewRequest("GET", "http://task-api/v1/var/nomad/jobs/web", nil)
	req.Header.Set("X-Nomad-Token", "tok")
	r, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Body.Close()
	b, _ := io.ReadAll(r.Body)
	if r.StatusCode != 200 || string(b) != "agent says hi over TLS" {
		t.Fatalf("through the task API: %d %q", r.StatusCode, b)
	}
}

// newTaskAPI is a task API server forwarding to agentURL, closed when the
// test ends.
func newTaskAPI(t *testing.T, agentURL string, transport http.RoundTripper) *taskapi.Server {
	t.Helper()
	s, err := taskapi.New(agentURL, transport, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Error(err)
		}
	})
	return s
}
