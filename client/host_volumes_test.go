package client

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/drover-io/drover/structs"
)

func TestHostVolumes(t *testing.T) {
	dir := t.TempDir()
	data := filepath.Join(dir, "data")
	if err := os.Mkdir(data, 0o755); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link")
	if err := os.Symlink(data, link); err != nil {
		t.Fatal(err)
	}
	got, err := hostVolumes(map[string]*structs.ClientHostVolumeConfig{
		"data": {Path: data},
		"via":  {Path: link, ReadOnly: true},
	})
	if err != nil {
		t.Fatal(err)
	}
	if hv := got["data"]; hv == nil || *hv != (structs.ClientHostVolumeConfig{Name: "data", Path: data}) {
		t.Errorf("data = %+v", hv)
	}
	if hv := got["via"]; hv == nil || *hv != (structs.ClientHostVolumeConfig{Name: "via", Path: data, ReadOnly: true}) {
		t.Errorf("a volume behind a link = %+v, want the link resolved", hv)
	}
	if got, err := hostVolumes(nil); got != nil || err != nil {
		t.Errorf("no volumes = %v, %v", got, err)
	}

	dangling := filepath.Join(dir, "dangling")
	if err := os.Symlink(filepath.Join(dir, "gone"), dangling); err != nil {
		t.Fatal(err)
	}
	_, err = hostVolumes(map[string]*structs.ClientHostVolumeConfig{
		"missing":  {Path: filepath.Join(dir, "missing")},
		"dangling": {Path: dangling},
		"relative": {Path: "srv/x"},
		"a/b":      {Path: data},
		"null":     nil,
	})
	if err == nil {
		t.Fatal("hostVolumes accepted bad volumes")
	}
	for _, want := range []string{
		`host_volume "missing": path "` + filepath.Join(dir, "missing") + `" does not exist: create it`,
		`host_volume "dangling": path "` + dangling + `" does not exist`,
		`host_volume "relative": path "srv/x" must be absolute`,
		`host_volume name "a/b" contains "/"`,
		`host_volume "null" has no configuration`,
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %q", err, want)
		}
	}
}
