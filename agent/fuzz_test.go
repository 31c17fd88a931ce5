package agent

import (
	"bytes"
	"net/http/httptest"
	"runtime"
	"strings"
	"testing"

	"github.com/hashicorp/go-msgpack/v2/codec"

	"github.com/drover-io/drover/api"
	"github.com/drover-io/drover/server"
	"github.com/drover-io/drover/structs"
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
	f.Add([]byte("client {\n  meta = "+strings.Repeat("{a=", 150)+"1"+strings.Repeat("}", 150)+"\n}\n"), false) // deep
	f.Add([]byte(`{"client": {"meta": `+nestedJSON(150)+`}}`), true)                                            // deep
	f.Add([]byte("client {\n  servers = ["+strings.Repeat(`"s:1",`, 5000)+"]\n}\n"), false)                     // wide
	f.Add([]byte("name = \""+strings.Repeat("x", 2<<20)+"\"\n"), false)                                         // huge
	f.Fuzz(func(t *testing.T, src []byte, isJSON bool) {
		name := "fuzz.hcl"
		if isJSON {
			name = "fuzz.json"
		}
		if got := allocated(func() { _, _ = parseConfig(name, src) }); got > 16<<20+2000*uint64(len(src)) {
			t.Fatalf("parseConfig(%s) of %d bytes allocated %d MiB", name, len(src), got>>20)
		}
	})
}

// FuzzDecodeJob feeds arbitrary bodies to what PUT /v1/jobs does before it
// proposes a job: decode the JSON (an api.Job and its task configs),
// convert, validate. None panics or allocates more than a bound
// proportional to the body, and a job that validates must encode as a
// raft entry and decode back: a committed entry that cannot be read back
// would fail on every restart.
func FuzzDecodeJob(f *testing.F) {
	f.Add([]byte(mockJobBody("web", "1")))
	f.Add([]byte(strings.Replace(mockJobBody("web", "1"), `{"run_for": "10s"}`, nestedJSON(5000), 1)))                                   // deep
	f.Add([]byte(strings.Replace(mockJobBody("web", "1"), `{"run_for": "10s"}`, nestedJSON(31), 1)))                                     // deep, valid
	f.Add([]byte(strings.Replace(mockJobBody("web", "1"), `{"run_for": "10s"}`, `{"args": [`+strings.Repeat(`"a",`, 20000)+`"a"]}`, 1))) // wide
	f.Add([]byte(strings.Replace(mockJobBody("web", "1"), `"Meta": {"v": "1"}`, `"Meta": {"v": "`+strings.Repeat("x", 2<<20)+`"}`, 1)))  // huge
	h := server.NewRPCCodec()
	f.Fuzz(func(t *testing.T, body []byte) {
		var job *structs.Job
		got := allocated(func() {
			var req api.JobRegisterRequest
			if err := decodeBody(httptest.NewRequest("PUT", "/v1/jobs", bytes.NewReader(body)), &req); err != nil || req.Job == nil {
				return
			}
			j, _, err := ConvertJob(req.Job)
			if err != nil {
				return
			}
			j.Canonicalize()
			if j.Validate() == nil {
				job = j
			}
		})
		if got > 32<<20+200*uint64(len(body)) {
			t.Fatalf("decoding a %d-byte job allocated %d MiB", len(body), got>>20)
		}
		if job == nil {
			return
		}
		var buf []byte
		cmd := &server.JobRegisterCommand{Job: job, Eval: &structs.Evaluation{ID: "e"}}
		if err := codec.NewEncoderBytes(&buf, h).Encode(cmd); err != nil {
			t.Fatalf("a valid job does not encode: %v", err)
		}
		var back server.JobRegisterCommand
		if err := codec.NewDecoderBytes(buf, h).Decode(&back); err != nil {
			t.Fatalf("a valid job does not decode back: %v", err)
		}
	})
}
