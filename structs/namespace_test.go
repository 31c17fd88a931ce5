package structs

import (
	"strings"
	"testing"
)

func TestNamespaceAllowsJob(t *testing.T) {
	job := func(driver, mode string) *Job {
		tg := &TaskGroup{Name: "g", Tasks: []*Task{{Name: "t", Driver: driver}}}
		if mode != "-" {
			tg.Networks = []*NetworkResource{{Mode: mode}}
		}
		return &Job{ID: "j", TaskGroups: []*TaskGroup{tg}}
	}
	for _, tc := range []struct {
		name string
		caps *NamespaceCapabilities
		job  *Job
		want string
	}{
		{"no capabilities", nil, job("raw_exec", "bridge"), ""},
		{"enabled driver", &NamespaceCapabilities{EnabledTaskDrivers: []string{"docker"}}, job("docker", "-"), ""},
		{"driver not enabled", &NamespaceCapabilities{EnabledTaskDrivers: []string{"docker"}}, job("exec", "-"), `the task driver "exec" is not allowed`},
		{"driver disabled", &NamespaceCapabilities{DisabledTaskDrivers: []string{"raw_exec"}}, job("raw_exec", "-"), `the task driver "raw_exec" is not allowed`},
		{"network mode unset is host", &NamespaceCapabilities{DisabledNetworkModes: []string{"host"}}, job("docker", ""), `the network mode "host" is not allowed`},
		{"network mode enabled", &NamespaceCapabilities{EnabledNetworkModes: []string{"bridge"}}, job("docker", "bridge"), ""},
		{"no network block", &NamespaceCapabilities{EnabledNetworkModes: []string{"bridge"}}, job("docker", "-"), ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := (&Namespace{Name: "ns", Capabilities: tc.caps}).AllowsJob(tc.job)
			if tc.want == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			if KindOf(err) != KindInvalid || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want %q", err, tc.want)
			}
		})
	}
}

func TestNamespaceCopy(t *testing.T) {
	n := &Namespace{Name: "a", Meta: map[string]string{"k": "v"}, Capabilities: &NamespaceCapabilities{EnabledTaskDrivers: []string{"docker"}}}
	c := n.Copy()
	c.Meta["k"] = "x"
	c.Capabilities.EnabledTaskDrivers[0] = "exec"
	if n.Meta["k"] != "v" || n.Capabilities.EnabledTaskDrivers[0] != "docker" {
		t.Fatalf("the copy shares data: %+v", n)
	}
}
