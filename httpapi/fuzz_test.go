package httpapi

import (
	"bytes"
	"fmt"
	"net/http/httptest"
	"runtime"
	"strings"
	"testing"

	"github.com/hashicorp/go-msgpack/v2/codec"

	"github.com/drover-io/drover/api"
	"github.com/drover-io/drover/rpcapi"
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

// nestedJSON returns a JSON object nested n levels deep.
func nestedJSON(n int) string {
	return strings.Repeat(`{"a":`, n) + "1" + strings.Repeat("}", n)
}

// mockJobBody is a PUT /v1/jobs body of a one-task mock job.
func mockJobBody(id string, meta string) string {
	return fmt.Sprintf(`{"Job": {"ID": %q, "Type": "service", "Meta": {"v": %q},
		"TaskGroups": [{"Name": "g", "Count": 1, "Tasks": [{"Name": "t", "Driver": "mock_driver",
		"Config": {"run_for": "10s"}, "Resources": {"CPU": 100, "MemoryMB": 32}}]}]}}`, id, meta)
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
	h := rpcapi.NewCodec()                                                                                                               // as the server decodes requests and raft entries
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
