package httpapi

import (
	"reflect"
	"strings"
	"testing"

	"github.com/drover-io/drover/structs"
)

// TestParseEventTopics: topic=Topic[:key] parameters; a key holding a
// colon is refused, as Nomad refuses it ("Invalid key value pair"), rather
// than matching nothing.
func TestParseEventTopics(t *testing.T) {
	for _, tc := range []struct {
		name   string
		params []string
		want   map[string][]string
		err    string
	}{
		{"none: every topic", nil, map[string][]string{structs.TopicAll: {"*"}}, ""},
		{"topic alone", []string{"Node"}, map[string][]string{"Node": {"*"}}, ""},
		{"topic and key", []string{"Job:web", "Job:db", "Evaluation:*"}, map[string][]string{"Job": {"web", "db"}, "Evaluation": {"*"}}, ""},
		{"empty key", []string{"Job:"}, map[string][]string{"Job": {"*"}}, ""},
		{"unknown topic", []string{"Nope:x"}, nil, `unknown topic "Nope"`},
		{"key with a colon", []string{"Evaluation:::*"}, nil, "Invalid key value pair"},
		{"two keys", []string{"Job:a:b"}, nil, "Invalid key value pair"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := parseEventTopics(tc.params)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want one containing %q", err, tc.err)
				}
				if k := structs.KindOf(err); k != structs.KindInvalid {
					t.Errorf("error kind %v, want invalid", k)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("topics %v, want %v", got, tc.want)
			}
		})
	}
}
