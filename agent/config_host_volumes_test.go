package agent

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/drover-io/drover/structs"
)

func TestConfigHostVolumes(t *testing.T) {
	dir := t.TempDir()
	first := filepath.Join(dir, "a.hcl")
	second := filepath.Join(dir, "b.json")
	writeConfig := func(path, src string) {
		if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	writeConfig(first, `
client {
  host_volume "data" {
    path = "/srv/data/"
  }
  host_volume "certs" {
    path      = "/etc/ssl/certs"
    read_only = true
  }
}`)
	// A later file replaces a volume of the same name and adds others.
	writeConfig(second, `{"client": {"host_volume": {"data": {"path": "/mnt/data", "read_only": true}, "logs": [{"path": "/var/log/app"}]}}}`)
	c := loadFiles(t, DefaultConfig(), first, second)
	want := map[string]HostVolumeConfig{
		"data":  {Path: "/mnt/data", ReadOnly: true},
		"certs": {Path: "/etc/ssl/certs", ReadOnly: true},
		"logs":  {Path: "/var/log/app"},
	}
	if !reflect.DeepEqual(c.Client.HostVolumes, want) {
		t.Fatalf("host volumes = %v, want %v", c.Client.HostVolumes, want)
	}
	got := c.Client.clientHostVolumes()
	if hv := got["certs"]; hv == nil || *hv != (structs.ClientHostVolumeConfig{Name: "certs", Path: "/etc/ssl/certs", ReadOnly: true}) {
		t.Errorf("client host volume = %+v", hv)
	}
	c = loadFiles(t, DefaultConfig(), first)
	if c.Client.HostVolumes["data"].Path != "/srv/data" {
		t.Errorf("path not cleaned: %q", c.Client.HostVolumes["data"].Path)
	}
}

func TestConfigHostVolumeErrors(t *testing.T) {
	tests := []struct {
		name, src string
		want      []string
	}{
		{"no path", "client {\n  host_volume \"x\" {\n    read_only = true\n  }\n}\n", []string{"a.hcl:2:", `client.host_volume "x" needs a path`}},
		{"relative path", "client {\n  host_volume \"x\" {\n    path = \"srv/x\"\n  }\n}\n", []string{`client.host_volume "x": path "srv/x" must be absolute`}},
		{"no name", "client {\n  host_volume {\n    path = \"/x\"\n  }\n}\n", []string{"host_volume needs a name"}},
		{"bad name", "client {\n  host_volume \"a/b\" {\n    path = \"/x\"\n  }\n}\n", []string{`host_volume name "a/b" contains "/"`}},
		{"twice", "client {\n  host_volume \"x\" {\n    path = \"/x\"\n  }\n  host_volume \"x\" {\n    path = \"/y\"\n  }\n}\n", []string{`client.host_volume "x" is defined twice`}},
		{"unknown key", "client {\n  host_volume \"x\" {\n    path = \"/x\"\n    readonly = true\n  }\n}\n", []string{"a.hcl:4:5:", `"readonly"`, `did you mean "read_only"?`}},
		{"wrong type", "client {\n  host_volume \"x\" {\n    path = \"/x\"\n    read_only = \"yes\"\n  }\n}\n", []string{"client.host_volume.read_only"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := parseConfig("a.hcl", []byte(tc.src))
			if err == nil {
				t.Fatal("no error")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error lacks %q:\n%v", w, err)
				}
			}
		})
	}
}
