package taskenv

import (
	"encoding/json"
	"reflect"
	"testing"
)

var (
	testEnv   = map[string]string{"NOMAD_TASK_DIR": "/t/local", "PORT": "8080", "EMPTY": ""}
	testAttrs = map[string]string{"kernel.name": "linux", "node.unique.id": "n1"}
	testMeta  = map[string]string{"rack": "r1"}
)

func TestInterpolate(t *testing.T) {
	cases := []struct {
		in, want string
	}{
		{"plain", "plain"},
		{"${NOMAD_TASK_DIR}/bin", "/t/local/bin"},
		{"${PORT}:${PORT}", "8080:8080"},
		{`${env["PORT"]}`, "8080"},
		{"${env['PORT']}", "8080"},
		{"${ PORT }", "8080"},
		{"${EMPTY}x", "x"},
		{"${attr.kernel.name}", "linux"},
		{"${node.unique.id}", "n1"},
		{"${meta.rack}", "r1"},
		{"${UNKNOWN} ${attr.nope} ${meta.nope} ${node.nope}", "${UNKNOWN} ${attr.nope} ${meta.nope} ${node.nope}"},
		{"${unterminated", "${unterminated"},
		{"a ${PORT} ${open", "a 8080 ${open"},
		{"$PORT {PORT}", "$PORT {PORT}"},
		{"", ""},
	}
	for _, tc := range cases {
		t.Run(tc.in, func(t *testing.T) {
			if got := Interpolate(tc.in, testEnv, testAttrs, testMeta); got != tc.want {
				t.Fatalf("Interpolate(%q) = %q, want %q", tc.in, got, tc.want)
			}
		})
	}
}

func TestInterpolateConfig(t *testing.T) {
	cases := []struct {
		name string
		in   any
		want any
	}{
		{"string", "${PORT}", "8080"},
		{"number", 3.5, 3.5},
		{"bool", true, true},
		{"nil", nil, nil},
		{"strings", []string{"-p", "${PORT}"}, []string{"-p", "8080"}},
		{"string map", map[string]string{"${PORT}": "${meta.rack}"}, map[string]string{"8080": "r1"}},
		{
			"nested",
			map[string]any{"command": "${NOMAD_TASK_DIR}/run", "args": []any{"--port", "${PORT}", 1.0},
				"inner": map[string]any{"k": "${attr.kernel.name}"}},
			map[string]any{"command": "/t/local/run", "args": []any{"--port", "8080", 1.0},
				"inner": map[string]any{"k": "linux"}},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := InterpolateConfig(tc.in, testEnv, testAttrs, testMeta); !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("InterpolateConfig = %#v, want %#v", got, tc.want)
			}
		})
	}
}

func TestInterpolateJSON(t *testing.T) {
	cases := []struct {
		name, in, want string
		wantErr        bool
	}{
		{"empty", "", "", false},
		{"config", `{"command":"${NOMAD_TASK_DIR}/x","args":["${PORT}"],"n":12345678901234567890}`,
			`{"args":["8080"],"command":"/t/local/x","n":12345678901234567890}`, false},
		{"invalid", `{"command":`, "", true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := InterpolateJSON(json.RawMessage(tc.in), testEnv, testAttrs, testMeta)
			if (err != nil) != tc.wantErr {
				t.Fatalf("err = %v", err)
			}
			if string(got) != tc.want {
				t.Fatalf("got %s, want %s", got, tc.want)
			}
		})
	}
}
