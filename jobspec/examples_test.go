package jobspec

import (
	"path/filepath"
	"testing"
)

// TestExamplesParse checks that the example jobs shipped in examples/ parse.
func TestExamplesParse(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("..", "examples", "*.nomad.hcl"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Skip("no examples/*.nomad.hcl yet")
	}
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			job, err := ParseFile(file)
			if err != nil {
				t.Fatalf("ParseFile: %v", err)
			}
			if job.ID == nil || *job.ID == "" || len(job.TaskGroups) == 0 {
				t.Errorf("job has no ID or no group: %+v", job)
			}
		})
	}
}
