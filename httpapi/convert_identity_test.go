package httpapi

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/drover-io/drover/api"
	"github.com/drover-io/drover/structs"
)

func TestConvertIdentities(t *testing.T) {
	tests := []struct {
		name          string
		identity      string
		identities    string
		wantDefault   *structs.TaskIdentity
		wantNamed     []*structs.TaskIdentity
		warn, wantErr string
	}{
		{name: "none"},
		{name: "default", identity: `{"Env":true,"File":true}`, wantDefault: &structs.TaskIdentity{Env: true, File: true}},
		{name: "named", identities: `[{"Name":"vault","Audience":["vault.io"],"File":true,"TTL":3600000000000,"Filepath":"local/v.jwt"}]`,
			wantNamed: []*structs.TaskIdentity{{Name: "vault", Audience: []string{"vault.io"}, File: true, TTL: time.Hour, Filepath: "local/v.jwt"}}},
		{name: "change_mode warns", identity: `{"Env":true,"ChangeMode":"restart"}`, wantDefault: &structs.TaskIdentity{Env: true}, warn: "change_mode"},
		{name: "unknown field", identity: `{"Envv":true}`, wantErr: "Envv"},
		{name: "named without a name", identities: `[{"File":true}]`, wantErr: "has no name"},
		{name: "two named alike", identities: `[{"Name":"a"},{"Name":"a"}]`, wantErr: `two identity blocks named "a"`},
		{name: "negative ttl", identity: `{"TTL":-1}`, wantErr: "negative ttl"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := minimalJob(func(j *api.Job) {
				if tt.identity != "" {
					j.TaskGroups[0].Tasks[0].Identity = json.RawMessage(tt.identity)
				}
				if tt.identities != "" {
					j.TaskGroups[0].Tasks[0].Identities = json.RawMessage(tt.identities)
				}
			})
			job, warnings, err := ConvertJob(in)
			if err == nil && job != nil {
				err = structs.ValidateTaskIdentities(job.TaskGroups[0].Tasks[0])
			}
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			task := job.TaskGroups[0].Tasks[0]
			if !reflect.DeepEqual(task.Identity, tt.wantDefault) || !reflect.DeepEqual(task.Identities, tt.wantNamed) {
				t.Errorf("identity %+v, identities %+v", task.Identity, task.Identities)
			}
			if tt.warn != "" && !strings.Contains(strings.Join(warnings, "\n"), tt.warn) {
				t.Errorf("warnings %q lack %q", warnings, tt.warn)
			}
			for _, w := range warnings {
				if strings.Contains(w, "Identit") && tt.warn == "" {
					t.Errorf("unexpected warning %q", w)
				}
			}
		})
	}
}
