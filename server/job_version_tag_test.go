package server

import (
	"context"
	"strings"
	"testing"

	"github.com/drover-io/drover/structs"
)

// TestJobTagVersion checks applying and removing version tags: unique
// names per job, the current version by default, a tagged version kept
// beyond structs.JobTrackedVersions, and a tag not carried to new versions.
func TestJobTagVersion(t *testing.T) {
	s := newTestServer(t, nil)
	ctx := context.Background()
	for i := 1; i <= 2; i++ {
		registerJob(t, s, testJob("web", i, 100, 100)) // versions 0, 1
	}
	v0 := uint64(0)
	steps := []struct {
		name    string
		req     structs.JobTagRequest
		wantErr string
		wantVer uint64
	}{
		{name: "tag version 0", req: structs.JobTagRequest{Name: "golden", Description: "good", Version: &v0}, wantVer: 0},
		{name: "tag the current version", req: structs.JobTagRequest{Name: "latest"}, wantVer: 1},
		{name: "name used by another version", req: structs.JobTagRequest{Name: "golden"}, wantErr: `tag "golden" is already on version 0`},
		{name: "version tagged with another name", req: structs.JobTagRequest{Name: "other", Version: &v0}, wantErr: `already tagged "golden"`},
		{name: "same tag again updates it", req: structs.JobTagRequest{Name: "golden", Description: "better", Version: &v0}, wantVer: 0},
		{name: "no name", req: structs.JobTagRequest{}, wantErr: "missing tag name"},
		{name: "unset unknown", req: structs.JobTagRequest{Name: "nope", Unset: true}, wantErr: `has no version tagged "nope"`},
		{name: "unset", req: structs.JobTagRequest{Name: "latest", Unset: true}, wantVer: 1},
	}
	for _, st := range steps {
		req := st.req
		req.JobID = "web"
		resp, err := s.JobTagVersion(ctx, &req)
		if st.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), st.wantErr) {
				t.Fatalf("%s: error = %v, want %q", st.name, err, st.wantErr)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%s: %v", st.name, err)
		}
		if resp.Version != st.wantVer {
			t.Errorf("%s: version = %d, want %d", st.name, resp.Version, st.wantVer)
		}
	}
	cur, _ := s.JobGet(ctx, &structs.JobSpecificRequest{JobID: "web"})
	if cur.Job.VersionTag != nil {
		t.Errorf("current version tag = %+v, want none after unset", cur.Job.VersionTag)
	}
	// Many new versions: version 0 stays, tagged; new versions are untagged.
	for i := 3; i < 3+structs.JobTrackedVersions+2; i++ {
		registerJob(t, s, testJob("web", i, 100, 100))
	}
	vs, err := s.JobVersions(ctx, &structs.JobVersionsRequest{JobID: "web"})
	if err != nil {
		t.Fatal(err)
	}
	oldest := vs.Versions[len(vs.Versions)-1]
	if oldest.Version != 0 || oldest.VersionTag == nil || oldest.VersionTag.Name != "golden" || oldest.VersionTag.Description != "better" {
		t.Errorf("oldest kept version = %d tag %+v, want 0 tagged golden (better)", oldest.Version, oldest.VersionTag)
	}
	if len(vs.Versions) != structs.JobTrackedVersions+1 {
		t.Errorf("kept %d versions, want %d and the tagged one", len(vs.Versions), structs.JobTrackedVersions)
	}
	// Reverting to the tagged version does not copy its tag.
	if _, err := s.JobRevert(ctx, &structs.JobRevertRequest{JobID: "web", JobVersion: 0}); err != nil {
		t.Fatal(err)
	}
	cur, _ = s.JobGet(ctx, &structs.JobSpecificRequest{JobID: "web"})
	if cur.Job.VersionTag != nil {
		t.Errorf("reverted version carries tag %+v", cur.Job.VersionTag)
	}
}
