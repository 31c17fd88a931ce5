package command

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/drover-io/drover/jobspec"
)

// TestExampleJobsParse keeps `job init`'s job and examples/ valid job files.
func TestExampleJobsParse(t *testing.T) {
	if _, err := jobspecParse(defaultInitFile, []byte(exampleJob), jobspec.Options{}); err != nil {
		t.Errorf("job init's example: %v", err)
	}
	files, err := filepath.Glob(filepath.Join("..", "examples", "*.nomad.hcl"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no examples found: %v", err)
	}
	for _, f := range files {
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		// A variable file beside the example (x.vars.hcl for
		// x.nomad.hcl) is used as `-var-file` would.
		var opts jobspec.Options
		vars := strings.TrimSuffix(f, ".nomad.hcl") + ".vars.hcl"
		if vsrc, err := os.ReadFile(vars); err == nil {
			opts.VarFiles = []jobspec.VarFile{{Name: vars, Content: vsrc}}
		}
		job, err := jobspecParse(f, src, opts)
		if err != nil {
			t.Errorf("%s: %v", f, err)
			continue
		}
		if job.ID == nil || len(job.TaskGroups) == 0 {
			t.Errorf("%s: parsed to a job without ID or groups", f)
		}
		if err := checkTaskConfigs(builtinTaskConfigs(), f, src, job); err != nil {
			t.Errorf("%s: %v", f, err)
		}
	}
}
