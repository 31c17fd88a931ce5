package jobspec

import (
	"strings"
	"testing"
)

func TestParseJSON(t *testing.T) {
	tests := []struct {
		name     string
		filename string
		src      string
		wantID   string
		wantErr  string // prefix of the error; "" for success
	}{
		{"wrapped", "job.json", `{"Job": {"ID": "a", "TaskGroups": []}}`, "a", ""},
		{"bare", "job.json", `{"ID": "b"}`, "b", ""},
		{"detected by content", "job.nomad", "  \n{\"ID\": \"c\"}", "c", ""},
		{"syntax error", "job.json", "{\n  \"ID\": \"a\",\n  \"Type\": }\n", "", "job.json:3:11: Invalid JSON job"},
		{"type error", "job.json", "{\"Job\": {\n  \"ID\": 7}}", "", "job.json:2:10: Invalid JSON job"},
		{"truncated", "job.json", "{\"ID\": \"a\"", "", "job.json:1:11: Invalid JSON job"},
		{"missing id", "job.json", `{"Job": {"Name": "x"}}`, "", "job.json: Missing job ID"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			job, err := Parse(tt.filename, []byte(tt.src))
			if tt.wantErr != "" {
				if err == nil || !strings.HasPrefix(err.Error(), tt.wantErr) {
					t.Fatalf("Parse error = %v, want prefix %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			if *job.ID != tt.wantID || *job.Name != tt.wantID {
				t.Errorf("ID, Name = %q, %q; want %q for both", *job.ID, *job.Name, tt.wantID)
			}
		})
	}
}

func TestParseJSONDropsNullRawFields(t *testing.T) {
	src := `{"Job": {"ID": "a", "Periodic": null, "TaskGroups": [{"Name": "g", "Services": null,
		"Tasks": [{"Name": "t", "Driver": "exec", "Vault": null, "Consul": {"Namespace": "x"}}]}]}}`
	job, err := Parse("a.json", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	task := job.TaskGroups[0].Tasks[0]
	if job.Periodic != nil || job.TaskGroups[0].Services != nil || task.Vault != nil {
		t.Errorf("null raw fields kept: Periodic=%v Services=%v Vault=%s", job.Periodic, job.TaskGroups[0].Services, task.Vault)
	}
	if string(task.Consul) != `{"Namespace": "x"}` {
		t.Errorf("Consul = %s, want it kept", task.Consul)
	}
}
