package template

import (
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"sync"
	"testing"

	"github.com/drover-io/drover/structs"
)

// TestManagerReadsServicesFromTheAgent renders nomadService and
// nomadServices against a fake of the agent's Nomad-compatible service
// endpoints, and checks that the reads are made in the task's namespace;
// an agent serving HTTPS is read with the transport the client gives.
func TestManagerReadsServicesFromTheAgent(t *testing.T) {
	for _, https := range []bool{false, true} {
		t.Run(map[bool]string{false: "http", true: "https"}[https], func(t *testing.T) { readsServices(t, https) })
	}
}

func readsServices(t *testing.T, https bool) {
	var mu sync.Mutex
	var namespaces []string
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		namespaces = append(namespaces, r.URL.Query().Get("namespace"))
		mu.Unlock()
		w.Header().Set("X-Nomad-Index", "7")
		w.Header().Set("X-Nomad-KnownLeader", "true")
		w.Header().Set("X-Nomad-LastContact", "0")
		if r.URL.Query().Get("index") == "7" {
			<-r.Context().Done() // nothing changes: block until the reader goes
			return
		}
		switch r.URL.Path {
		case "/v1/service/db":
			_, _ = w.Write([]byte(`[{"ID":"_nomad-task-1","ServiceName":"db","Namespace":"default","NodeID":"n1","Datacenter":"dc1",
				"JobID":"db","AllocID":"a1","Tags":["primary"],"Address":"10.0.0.5","Port":5432,"CreateIndex":7,"ModifyIndex":7}]`))
		case "/v1/services":
			_, _ = w.Write([]byte(`[{"Namespace":"default","Services":[{"ServiceName":"db","Tags":["primary"]}]}]`))
		default:
			http.NotFound(w, r)
		}
	}))
	var transport http.RoundTripper
	if https {
		srv.StartTLS()
		transport = srv.Client().Transport // trusts the test CA
	} else {
		srv.Start()
	}
	defer srv.Close()

	tm := withDefaults(&structs.Template{DestPath: "local/svc", EmbeddedTmpl: `{{ range nomadService "db" }}{{ .Address }}:{{ .Port }} {{ .Tags }}{{ end }}
{{ range nomadServices }}{{ .Name }};{{ end }}`})
	dir := t.TempDir()
	m, err := New(Config{RPC: newFakeVars(), Identity: webIdentity, TaskDir: dir, Templates: []*structs.Template{tm},
		ServicesURL: srv.URL, ServicesTransport: transport})
	if err != nil {
		t.Fatal(err)
	}
	m.Start()
	waitRendered(t, m, nil)
	m.Stop()
	if got, want := readFile(t, filepath.Join(dir, "local/svc")), "10.0.0.5:5432 [primary]\ndb;"; got != want {
		t.Fatalf("rendered %q, want %q", got, want)
	}
	mu.Lock()
	defer mu.Unlock()
	for _, ns := range namespaces {
		if ns != "default" {
			t.Fatalf("a service read in namespace %q, want the task's", ns)
		}
	}
}
