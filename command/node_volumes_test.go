package command

import (
	"strings"
	"testing"

	"github.com/drover-io/drover/api"
)

func TestFormatHostVolumes(t *testing.T) {
	n, allocs := fixtureNode()
	n.HostVolumes = map[string]*api.HostVolumeInfo{
		"shared": {Name: "shared", Path: "/srv/shared"},
		"certs":  {Name: "certs", Path: "/etc/ssl/certs", ReadOnly: true},
	}
	out := formatNodeStatus(n, allocs, fixedNow, true)
	want := "\nHost Volumes\nName    ReadOnly  Source\ncerts   true      /etc/ssl/certs\nshared  false     /srv/shared\n"
	if !strings.Contains(out, want) {
		t.Errorf("node status -verbose lacks\n%s\nin\n%s", want, out)
	}
	if out := formatNodeStatus(n, allocs, fixedNow, false); strings.Contains(out, "Host Volumes") {
		t.Errorf("node status shows host volumes without -verbose:\n%s", out)
	}
}
