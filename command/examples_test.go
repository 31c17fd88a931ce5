package command

import (
	"os"
	"path/filepath"
	"testing"
)

// TestExampleJobsParse keeps `job init`'s job and examples/ valid job files.
func TestExampleJobsParse(t *testing.T) {
	if _, err := jobspecParse(defaultInitFile, []byte(exampleJob)); err != nil {
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
		job, err := jobspecParse(f, src)
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
