package server

import (
	"context"
	"io"
	"log/slog"
	"maps"
	"strings"
	"testing"

	"github.com/drover-io/drover/structs"
)

func TestJobSubmissions(t *testing.T) {
	s := newTestServer(t, func(c *Config) { c.NumWorkers = -1 })
	ctx := context.Background()
	get := func(id string, version uint64) (*structs.JobSubmission, error) {
		r, err := s.JobGetSubmission(ctx, &structs.JobSubmissionRequest{JobID: id, Version: version})
		if err != nil {
			return nil, err
		}
		return r.Submission, nil
	}
	if _, err := get("web", 0); structs.KindOf(err) != structs.KindNotFound || !strings.Contains(err.Error(), "job source not found") {
		t.Fatalf("source of an unknown job: %v", err)
	}
	register := func(v int, sub *structs.JobSubmission) *structs.JobRegisterResponse {
		t.Helper()
		job := testJob("web", 1, 100, 100)
		job.Meta = map[string]string{"v": string(rune('0' + v))}
		r, err := s.JobRegister(ctx, &structs.JobRegisterRequest{Job: job, Submission: sub})
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	flags := map[string]string{"X": "x"}
	register(0, &structs.JobSubmission{Source: "v0", Format: "hcl2", VariableFlags: flags, Variables: "a = 1"})
	register(1, &structs.JobSubmission{Source: "v1", Format: "hcl2"})
	register(2, nil) // no source sent
	for v, want := range map[uint64]string{0: "v0", 1: "v1"} {
		sub, err := get("web", v)
		if err != nil || sub.Source != want || sub.Version != v || sub.Namespace != "default" {
			t.Fatalf("source of version %d: %+v, %v", v, sub, err)
		}
	}
	if sub, _ := get("web", 0); !maps.Equal(sub.VariableFlags, flags) || sub.Variables != "a = 1" {
		t.Fatalf("version 0's variables: %+v", sub)
	}
	if _, err := get("web", 2); structs.KindOf(err) != structs.KindNotFound {
		t.Fatalf("version registered without a source: %v", err)
	}
	// Another namespace has its own.
	if _, err := s.JobGetSubmission(ctx, &structs.JobSubmissionRequest{JobID: "web", QueryOptions: structs.QueryOptions{Namespace: "dev"}}); structs.KindOf(err) != structs.KindNotFound {
		t.Fatalf("source in another namespace: %v", err)
	}
	// A source too large is not kept, and the registration says so.
	big := register(3, &structs.JobSubmission{Source: strings.Repeat("x", structs.MaxJobSourceBytes+1)})
	if !strings.Contains(big.Warnings, "was not kept") {
		t.Fatalf("warnings of a too large source: %q", big.Warnings)
	}
	if _, err := get("web", 3); structs.KindOf(err) != structs.KindNotFound {
		t.Fatalf("a too large source was kept: %v", err)
	}

	// A snapshot keeps them.
	snap, err := s.fsm.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	sink := &memSink{}
	if err := snap.Persist(sink); err != nil {
		t.Fatal(err)
	}
	snap.Release()
	fresh, err := newFSM(slog.New(slog.DiscardHandler), nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := fresh.Restore(io.NopCloser(strings.NewReader(sink.String()))); err != nil {
		t.Fatal(err)
	}
	if sub, err := fresh.State().JobSubmission(nil, "default", "web", 1); err != nil || sub == nil || sub.Source != "v1" {
		t.Fatalf("restored source: %+v, %v", sub, err)
	}

	// Versions beyond the kept ones lose their source with them.
	for v := 4; v < 4+structs.JobTrackedVersions; v++ {
		register(v, &structs.JobSubmission{Source: "later", Format: "hcl2"})
	}
	if _, err := get("web", 0); structs.KindOf(err) != structs.KindNotFound {
		t.Fatalf("source of a dropped version: %v", err)
	}
	// A purge removes them all.
	if _, err := s.JobDeregister(ctx, &structs.JobDeregisterRequest{Namespace: "default", JobID: "web", Purge: true}); err != nil {
		t.Fatal(err)
	}
	all, err := s.State().JobSubmissions(nil)
	if err != nil || len(all) != 0 {
		t.Fatalf("sources after the purge: %d, %v", len(all), err)
	}
}
