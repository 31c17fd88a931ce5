package inputlimit

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"
)

func TestCheckJSON(t *testing.T) {
	nest := func(n int) string { return strings.Repeat(`{"a":`, n) + "1" + strings.Repeat("}", n) }
	tests := []struct {
		name    string
		src     string
		max     int
		wantErr string // "" for no error
	}{
		{"flat", `{"a": 1, "b": [1, 2, 3]}`, 2, ""},
		{"at the limit", nest(5), 5, ""},
		{"one too deep", nest(6), 5, `line 1, column 26: Nesting too deep at a.a.a.a.a: JSON objects and arrays may nest at most 5 levels deep`},
		{"arrays", `[[[[1]]]]`, 3, `line 1, column 4: Nesting too deep at [0][0][0]`},
		{"array index", `[1, 2, [3, [4]]]`, 2, `Nesting too deep at [2][1]`},
		{"brackets in strings do not count", `{"a": "[[[[{{{{", "b\"[[[[": "\\"}`, 1, ""},
		{"keys with dots are quoted", `{"a.b": {"c": {}}}`, 2, `at "a.b".c`},
		{"second key", `{"a": 1, "b": {"c": [{}]}}`, 3, `at b.c[0]`},
		{"malformed input is left to the decoder", `}}}]]]{"a": `, 1, ""},
		{"unterminated string", `{"a": "{{{{{`, 1, ""},
		{"long path is shortened", nest(40), 30, `at a.a.a.a.a.a.a.a.a.a.a.a...(16 more)...a.a`},
		{"job config", `{"Job": {"TaskGroups": [{"Tasks": [{"Config": {"x": [[[1]]]}}]}]}`, 8,
			`Nesting too deep at Job.TaskGroups[0].Tasks[0].Config.x[0]:`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := CheckJSON("", []byte(tc.src), tc.max)
			if tc.wantErr == "" {
				if err != nil {
					t.Fatalf("CheckJSON = %v, want nil", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("CheckJSON = %v, want an error containing %q", err, tc.wantErr)
			}
			if !IsLimit(err) {
				t.Errorf("IsLimit(%v) = false", err)
			}
		})
	}
}

// TestCheckJSONIssueAttack is the task config of the issue, nested 5,000
// levels deep: refused, naming the field.
func TestCheckJSONIssueAttack(t *testing.T) {
	config := strings.Repeat(`{"a":`, 5000) + "1" + strings.Repeat("}", 5000)
	body := `{"Job": {"ID": "x", "TaskGroups": [{"Name": "g", "Tasks": [{"Name": "t", "Config": ` + config + `}]}]}}`
	err := CheckJSON("request body", []byte(body), MaxNesting)
	var le *Error
	if !errors.As(err, &le) {
		t.Fatalf("CheckJSON = %v, want an *Error", err)
	}
	if !strings.HasPrefix(le.Path, "Job.TaskGroups[0].Tasks[0].Config.a.a") || le.Line != 1 {
		t.Errorf("error = %+v, want the path of the config and a position", le)
	}
}

// jsonDepth is the real nesting depth of a valid JSON document.
func jsonDepth(t *testing.T, src []byte) int {
	dec := json.NewDecoder(bytes.NewReader(src))
	dec.UseNumber() // valid JSON may hold numbers no float64 holds (1E700)
	depth, deepest := 0, 0
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			return deepest
		}
		if err != nil {
			t.Fatalf("tokenize valid JSON %q: %v", src, err)
		}
		switch tok {
		case json.Delim('{'), json.Delim('['):
			depth++
			deepest = max(deepest, depth)
		case json.Delim('}'), json.Delim(']'):
			depth--
		}
	}
}

// FuzzCheckJSON checks CheckJSON against encoding/json: on valid JSON it
// refuses exactly the documents deeper than the limit; on anything it
// returns without panicking.
func FuzzCheckJSON(f *testing.F) {
	f.Add([]byte(`{"a": [1, {"b": "x"}], "c": "]]]\"{{"}`), 2)
	f.Add([]byte(strings.Repeat("[", 200)+strings.Repeat("]", 200)), 100)
	f.Add([]byte(strings.Repeat(`{"k":`, 150)+"null"+strings.Repeat("}", 150)), 100)
	f.Add([]byte(`["`+strings.Repeat(`\"[`, 100)+`"]`), 1)
	f.Add([]byte(`[`+strings.Repeat(`1,`, 100000)+`1]`), 1) // wide
	f.Fuzz(func(t *testing.T, src []byte, limit int) {
		limit = 1 + int(uint(limit)%120)
		err := CheckJSON("fuzz.json", src, limit)
		if err != nil && !IsLimit(err) {
			t.Fatalf("CheckJSON returned %T %v, want an *Error", err, err)
		}
		if !json.Valid(src) {
			return
		}
		if d := jsonDepth(t, src); (d > limit) != (err != nil) {
			t.Fatalf("depth %d, limit %d: CheckJSON = %v", d, limit, err)
		}
	})
}
