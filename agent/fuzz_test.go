package agent

import (
	"runtime"
	"strings"
	"testing"
)

// allocated runs fn and returns the bytes it allocated.
func allocated(fn func()) uint64 {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	fn()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// FuzzParseConfig feeds arbitrary agent configuration files, in HCL and
// JSON: each is decoded or refused with an error, none panics, and none
// allocates more than a bound proportional to its size (HCL's parser
// takes several hundred bytes per byte of dense input).
func FuzzParseConfig(f *testing.F) {
	f.Add([]byte("name = \"n\"\ndata_dir = \"/d\"\nclient {\n  enabled = true\n  servers = [\"a:4647\"]\n  meta { rack = \"r1\" }\n}\nplugin \"docker\" {\n  config {\n    volumes { enabled = true }\n  }\n}\n"), false)
	f.Add([]byte(`{"name": "n", "client": {"enabled": true, "meta": {"rack": "r1"}}, "plugin": {"raw_exec": {"config": {"enabled": true}}}}`), true)
	// The deep, wide and huge inputs are TestParseConfigBounded's: as fuzz
	// seeds they made the engine's first coverage pass outlast a short
	// -fuzztime ("context deadline exceeded" with no input run).
	f.Fuzz(func(t *testing.T, src []byte, isJSON bool) {
		checkParseConfigBounded(t, src, isJSON)
	})
}

// checkParseConfigBounded parses src as an agent configuration file and
// fails when the parse allocates more than a bound proportional to its size.
func checkParseConfigBounded(t *testing.T, src []byte, isJSON bool) {
	t.Helper()
	name := "fuzz.hcl"
	if isJSON {
		name = "fuzz.json"
	}
	if got := allocated(func() { _, _ = parseConfig(name, src) }); got > 16<<20+2000*uint64(len(src)) {
		t.Fatalf("parseConfig(%s) of %d bytes allocated %d MiB", name, len(src), got>>20)
	}
}

// TestParseConfigBounded feeds the pathological shapes (deep nesting, wide
// lists, one huge string) that the fuzzer's bound was written for.
func TestParseConfigBounded(t *testing.T) {
	tests := []struct {
		name   string
		src    []byte
		isJSON bool
	}{
		{"deep HCL", []byte("client {\n  meta = " + strings.Repeat("{a=", 150) + "1" + strings.Repeat("}", 150) + "\n}\n"), false},
		{"deep JSON", []byte(`{"client": {"meta": ` + nestedJSON(150) + `}}`), true},
		{"wide HCL", []byte("client {\n  servers = [" + strings.Repeat(`"s:1",`, 5000) + "]\n}\n"), false},
		{"huge string", []byte("name = \"" + strings.Repeat("x", 2<<20) + "\"\n"), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checkParseConfigBounded(t, tt.src, tt.isJSON)
		})
	}
}
