package jobspec

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/drover-io/drover/api"
	"github.com/drover-io/drover/inputlimit"
)

// parseMemBound is how much parsing n bytes may allocate. HCL's parser
// allocates several hundred bytes per byte of dense input, and evaluation
// is bounded by MaxEvalBytes, times the overhead of cty values over the
// bytes charged (measured: under 20).
func parseMemBound(n int) uint64 { return 16<<20 + 20*MaxEvalBytes + 2000*uint64(n) }

// allocated runs fn and returns the bytes it allocated.
func allocated(fn func()) uint64 {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	fn()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// limitSeeds are inputs at and beyond the limits: deep, wide and huge, in
// HCL and JSON.
func limitSeeds() [][]byte {
	deepHCL := "job \"x\" {\n  meta = " + strings.Repeat("{a=", 150) + "1" + strings.Repeat("}", 150) + "\n}\n"
	deepJSON := `{"Job": {"ID": "x", "TaskGroups": [{"Tasks": [{"Config": ` + strings.Repeat(`{"a":`, 150) + "1" + strings.Repeat("}", 150) + `}]}]}}`
	wideHCL := "job \"x\" {\n  datacenters = [" + strings.Repeat(`"dc",`, 20000) + "]\n}\n"
	wideJSON := `{"ID": "x", "Datacenters": [` + strings.TrimSuffix(strings.Repeat(`"dc",`, 20000), ",") + `]}`
	hugeHCL := "job \"x\" {\n  meta = { a = \"" + strings.Repeat("x", inputlimit.MaxHCLBytes) + "\" }\n}\n"
	chain := "locals {\n  a = 1" + strings.Repeat(" + 1", 200) + "\n}\n"
	bomb := "locals {\n  a0 = \"xxxxxxxxxxxxxxxx\"\n"
	for i := 1; i <= 30; i++ {
		bomb += fmt.Sprintf("  a%d = \"${local.a%d}${local.a%d}\"\n", i, i-1, i-1)
	}
	bomb += "}\n"
	return [][]byte{[]byte(deepHCL), []byte(deepJSON), []byte(wideHCL), []byte(wideJSON), []byte(hugeHCL), []byte(chain), []byte(bomb)}
}

// FuzzParse feeds arbitrary content to Parse, as HCL and as JSON: it may
// fail, but must never panic, must return either a job or an error, and
// must stay within parseMemBound.
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
	for _, src := range limitSeeds() {
		f.Add(src)
	}
	f.Fuzz(func(t *testing.T, src []byte) {
		for _, name := range []string{"fuzz.hcl", "fuzz.json"} {
			var job *api.Job
			var err error
			if got := allocated(func() { job, err = Parse(name, src) }); got > parseMemBound(len(src)) {
				t.Fatalf("Parse(%s) of %d bytes allocated %d MiB", name, len(src), got>>20)
			}
			if (job == nil) == (err == nil) {
				t.Fatalf("Parse(%s) = %v, %v: want exactly one of a job and an error", name, job, err)
			}
		}
	})
}

// FuzzParseRequest feeds arbitrary variable files and -var values with a
// job file that declares variables of every type, as POST /v1/jobs/parse
// receives them from anyone.
func FuzzParseRequest(f *testing.F) {
	f.Add("image = \"redis:7\"\ndcs = [\"a\", \"b\"]\n", "3", `["x"]`)
	f.Add("dcs = "+strings.Repeat("[", 200)+strings.Repeat("]", 200)+"\n", strings.Repeat("-", 500)+"1", strings.Repeat("[", 500))
	f.Add("count = 1"+strings.Repeat(" + 1", 300)+"\n", "1e999999", `[`+strings.Repeat(`"dc",`, 10000)+`]`)
	f.Fuzz(func(t *testing.T, varFile, count, dcs string) {
		req := &api.JobsParseRequest{JobHCL: varsJob, Variables: varFile, VarFlags: map[string]string{"count": count, "dcs": dcs}}
		size := len(varsJob) + len(varFile) + len(count) + len(dcs)
		var job *api.Job
		var err error
		if got := allocated(func() { job, err = ParseRequest(req) }); got > parseMemBound(size) {
			t.Fatalf("ParseRequest of %d bytes allocated %d MiB", size, got>>20)
		}
		if (job == nil) == (err == nil) {
			t.Fatalf("ParseRequest = %v, %v: want exactly one of a job and an error", job, err)
		}
	})
}
