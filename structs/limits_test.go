package structs

import (
	"strings"
	"testing"
)

// nestedConfig is {"a": {"a": ... {"a": 1}}}, depth maps deep.
func nestedConfig(depth int) map[string]any {
	var v any = 1
	for range depth - 1 {
		v = map[string]any{"a": v}
	}
	return map[string]any{"a": v}
}

func TestJobValidateFreeformLimits(t *testing.T) {
	long := strings.Repeat("x", MaxFreeformBytes)
	cases := []struct {
		name   string
		mutate func(j *Job)
		want   string // substring of the error; "" means valid
	}{
		{"config at the depth limit", func(j *Job) { j.TaskGroups[0].Tasks[0].Config = nestedConfig(MaxFreeformDepth) }, ""},
		{"config one level too deep", func(j *Job) { j.TaskGroups[0].Tasks[0].Config = nestedConfig(MaxFreeformDepth + 1) },
			`group "g", task "t": config is nested deeper than 32 levels at config.a.a.a.a.a.a.a...(23 more)...a.a: flatten it`},
		{"config nested 5,000 deep (the issue's attack)", func(j *Job) { j.TaskGroups[0].Tasks[0].Config = nestedConfig(5000) },
			`group "g", task "t": config is nested deeper than 32 levels`},
		{"lists count as levels", func(j *Job) {
			var v any = "x"
			for range 40 {
				v = []any{v}
			}
			j.TaskGroups[0].Tasks[0].Config = map[string]any{"args": v}
		}, `config is nested deeper than 32 levels at config.args[0][0][0][0][0][0]...(23 more)...[0][0]: flatten it`},
		{"config too large", func(j *Job) { j.TaskGroups[0].Tasks[0].Config = map[string]any{"a": long, "b": "y"} },
			`group "g", task "t": config is larger than 1048576 bytes (1 MiB)`},
		{"config many small values", func(j *Job) {
			args := make([]any, MaxFreeformBytes/8)
			for i := range args {
				args[i] = 1
			}
			j.TaskGroups[0].Tasks[0].Config = map[string]any{"args": args}
		}, `config is larger than`},
		{"job meta too large", func(j *Job) { j.Meta = map[string]string{"a": long} }, `job meta is larger than`},
		{"group meta too large", func(j *Job) { j.TaskGroups[0].Meta = map[string]string{long: "b"} }, `group "g": meta is larger than`},
		{"task meta too large", func(j *Job) { j.TaskGroups[0].Tasks[0].Meta = map[string]string{"a": long} }, `group "g", task "t": meta is larger than`},
		{"env too large", func(j *Job) { j.TaskGroups[0].Tasks[0].Env = map[string]string{"A": long} }, `group "g", task "t": env is larger than`},
		{"typed values", func(j *Job) {
			j.TaskGroups[0].Tasks[0].Config = map[string]any{"ports": []string{"http"}, "labels": map[string]string{"a": "b"}, "n": int64(3), "raw": []byte("x")}
		}, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			j := validJob()
			c.mutate(j)
			err := j.Validate()
			if c.want == "" {
				if err != nil {
					t.Fatalf("Validate = %v, want nil", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("Validate = %v, want an error containing %q", err, c.want)
			}
			if KindOf(err) != KindInvalid {
				t.Errorf("kind = %v, want invalid", KindOf(err))
			}
		})
	}
}
