package jobspec

import (
	"os"
	"path/filepath"
	"testing"
)

// FuzzParse feeds arbitrary content to Parse, as HCL and as JSON: it may
// fail, but must never panic, and must return either a job or an error.
func FuzzParse(f *testing.F) {
	for _, pattern := range []string{"testdata/*.hcl", "testdata/*.json", "testdata/invalid/*.hcl"} {
		files, err := filepath.Glob(pattern)
		if err != nil {
			f.Fatal(err)
		}
		for _, file := range files {
			src, err := os.ReadFile(file)
			if err != nil {
				f.Fatal(err)
			}
			f.Add(src)
		}
	}
	f.Add([]byte(`job "x" { group "g" { task "t" { driver = "exec" config { a = "${attr.x}" } } } }`))
	f.Add([]byte(`locals { a = local.b
b = local.a }`))
	f.Fuzz(func(t *testing.T, src []byte) {
		for _, name := range []string{"fuzz.hcl", "fuzz.json"} {
			job, err := Parse(name, src)
			if (job == nil) == (err == nil) {
				t.Fatalf("Parse(%s) = %v, %v: want exactly one of a job and an error", name, job, err)
			}
		}
	})
}
