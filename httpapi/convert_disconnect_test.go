package httpapi

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/drover-io/drover/api"
	"github.com/drover-io/drover/structs"
)

func TestConvertDisconnect(t *testing.T) {
	raw := func(s string) json.RawMessage { return json.RawMessage(s) }
	cases := []struct {
		name    string
		mutate  func(g *api.TaskGroup)
		want    *structs.DisconnectStrategy
		warn    string
		wantErr string
	}{
		{name: "none", mutate: func(*api.TaskGroup) {}},
		{
			name:   "block with defaults",
			mutate: func(g *api.TaskGroup) { g.Disconnect = raw(`{"LostAfter": 60000000000}`) },
			want:   &structs.DisconnectStrategy{LostAfter: time.Minute, Replace: true, Reconcile: "best_score"},
		},
		{
			name: "block in full",
			mutate: func(g *api.TaskGroup) {
				g.Disconnect = raw(`{"LostAfter": 1000000000, "Replace": false, "Reconcile": "keep_replacement"}`)
			},
			want: &structs.DisconnectStrategy{LostAfter: time.Second, Replace: false, Reconcile: "keep_replacement"},
		},
		{
			name:   "max_client_disconnect",
			mutate: func(g *api.TaskGroup) { g.MaxClientDisconnect = raw(`120000000000`) },
			want:   &structs.DisconnectStrategy{LostAfter: 2 * time.Minute, Replace: true, Reconcile: "best_score"},
		},
		{
			name:   "stop_on_client_after",
			mutate: func(g *api.TaskGroup) { g.Disconnect = raw(`{"StopOnClientAfter": 1000000000}`) },
			want:   &structs.DisconnectStrategy{StopOnClientAfter: time.Second, Replace: true, Reconcile: "best_score"},
		},
		{
			name: "both spellings",
			mutate: func(g *api.TaskGroup) {
				g.Disconnect = raw(`{"LostAfter": 1000000000}`)
				g.MaxClientDisconnect = raw(`1000000000`)
			},
			wantErr: "not both",
		},
		{name: "bad reconcile", mutate: func(g *api.TaskGroup) { g.Disconnect = raw(`{"Reconcile": "newest"}`) }, wantErr: `reconcile "newest" is invalid`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out, warnings, err := ConvertJob(minimalJob(func(j *api.Job) { c.mutate(j.TaskGroups[0]) }))
			if c.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), c.wantErr) {
					t.Fatalf("err = %v, want %q", err, c.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if c.warn != "" && !strings.Contains(strings.Join(warnings, "\n"), c.warn) {
				t.Fatalf("warnings %q lack %q", warnings, c.warn)
			}
			eq(t, "group disconnect", out.TaskGroups[0].Disconnect, c.want)
		})
	}
}
