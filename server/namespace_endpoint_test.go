package server

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/drover-io/drover/structs"
)

// jobIn returns a test job in a namespace.
func jobIn(ns, id string) *structs.Job {
	j := testJob(id, 1, 100, 100)
	j.Namespace = ns
	return j
}

func upsertNamespace(t *testing.T, s *Server, ns ...*structs.Namespace) *structs.NamespaceWriteResponse {
	t.Helper()
	resp, err := s.NamespaceUpsert(context.Background(), &structs.NamespaceUpsertRequest{Namespaces: ns})
	if err != nil {
		t.Fatalf("NamespaceUpsert: %v", err)
	}
	return resp
}

func namespaceNames(t *testing.T, s *Server, prefix string) []string {
	t.Helper()
	resp, err := s.NamespaceList(context.Background(), &structs.NamespaceListRequest{QueryOptions: structs.QueryOptions{Prefix: prefix}})
	if err != nil {
		t.Fatalf("NamespaceList: %v", err)
	}
	var out []string
	for _, ns := range resp.Namespaces {
		out = append(out, ns.Name)
	}
	return out
}

func TestNamespaceCRUD(t *testing.T) {
	s := newTestServer(t, nil)
	ctx := context.Background()
	if got := namespaceNames(t, s, ""); strings.Join(got, ",") != "default" {
		t.Fatalf("namespaces of a new cluster: %v", got)
	}
	def, err := s.NamespaceGet(ctx, &structs.NamespaceSpecificRequest{Name: "default"})
	if err != nil || def.Namespace.Description != structs.DefaultNamespaceDescription || def.Namespace.CreateIndex != 1 {
		t.Fatalf("default namespace: %+v, %v", def, err)
	}
	w := upsertNamespace(t, s, &structs.Namespace{Name: "dev", Description: "developers", Meta: map[string]string{"team": "a"}})
	upsertNamespace(t, s, &structs.Namespace{Name: "prod"})
	if got := namespaceNames(t, s, ""); strings.Join(got, ",") != "default,dev,prod" {
		t.Fatalf("namespaces: %v", got)
	}
	if got := namespaceNames(t, s, "de"); strings.Join(got, ",") != "default,dev" {
		t.Fatalf("namespaces with prefix de: %v", got)
	}
	got, err := s.NamespaceGet(ctx, &structs.NamespaceSpecificRequest{Name: "dev"})
	if err != nil || got.Namespace.Meta["team"] != "a" || got.Namespace.CreateIndex != w.Index || got.Index != w.Index {
		t.Fatalf("dev: %+v, %v (written at %d)", got.Namespace, err, w.Index)
	}
	// An update keeps the CreateIndex.
	w2 := upsertNamespace(t, s, &structs.Namespace{Name: "dev", Description: "changed"})
	got, _ = s.NamespaceGet(ctx, &structs.NamespaceSpecificRequest{Name: "dev"})
	if got.Namespace.Description != "changed" || got.Namespace.CreateIndex != w.Index || got.Namespace.ModifyIndex != w2.Index {
		t.Fatalf("updated dev: %+v", got.Namespace)
	}
	// The default namespace can be described otherwise, never deleted.
	upsertNamespace(t, s, &structs.Namespace{Name: "default", Description: "ours"})
	def, _ = s.NamespaceGet(ctx, &structs.NamespaceSpecificRequest{Name: "default"})
	if def.Namespace.Description != "ours" || def.Namespace.CreateIndex != 1 {
		t.Fatalf("default after update: %+v", def.Namespace)
	}
	if _, err := s.NamespaceGet(ctx, &structs.NamespaceSpecificRequest{Name: "nope"}); structs.KindOf(err) != structs.KindNotFound {
		t.Fatalf("unknown namespace: %v", err)
	}
	if _, err := s.NamespaceDelete(ctx, &structs.NamespaceDeleteRequest{Names: []string{"prod"}}); err != nil {
		t.Fatalf("delete prod: %v", err)
	}
	if got := namespaceNames(t, s, ""); strings.Join(got, ",") != "default,dev" {
		t.Fatalf("namespaces after delete: %v", got)
	}
}

func TestNamespaceUpsertInvalid(t *testing.T) {
	s := newTestServer(t, nil)
	tests := []struct {
		name string
		ns   *structs.Namespace
		want string
	}{
		{"star", &structs.Namespace{Name: "*"}, `invalid name "*".`},
		{"empty name", &structs.Namespace{}, `invalid name ""`},
		{"dot", &structs.Namespace{Name: "a.b"}, `invalid name "a.b"`},
		{"long description", &structs.Namespace{Name: "a", Description: strings.Repeat("x", 257)}, "description longer than 256"},
		{"quota", &structs.Namespace{Name: "a", Quota: "q"}, "resource quotas are not supported"},
		{"node pools", &structs.Namespace{Name: "a", NodePoolConfiguration: &structs.NamespaceNodePoolConfiguration{Default: "x"}}, "node pools are not supported"},
		{"driver both", &structs.Namespace{Name: "a", Capabilities: &structs.NamespaceCapabilities{
			EnabledTaskDrivers: []string{"docker"}, DisabledTaskDrivers: []string{"docker"}}}, "task drivers docker are both enabled and disabled"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := s.NamespaceUpsert(context.Background(), &structs.NamespaceUpsertRequest{Namespaces: []*structs.Namespace{tc.ns}})
			if structs.KindOf(err) != structs.KindInvalid || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, want an invalid-request error containing %q", err, tc.want)
			}
		})
	}
	if got := namespaceNames(t, s, ""); strings.Join(got, ",") != "default" {
		t.Fatalf("refused namespaces were stored: %v", got)
	}
}

func TestJobInUnknownNamespaceRefused(t *testing.T) {
	s := newTestServer(t, nil)
	ctx := context.Background()
	job := jobIn("dev", "web")
	_, err := s.JobRegister(ctx, &structs.JobRegisterRequest{Job: job})
	if structs.KindOf(err) != structs.KindInvalid || !strings.Contains(err.Error(), `namespace "dev" does not exist`) {
		t.Fatalf("register in a missing namespace: %v", err)
	}
	if j, _ := s.State().JobByID(nil, "dev", "web"); j != nil {
		t.Fatal("the job was stored")
	}
	if _, err := s.JobPlan(ctx, &structs.JobPlanRequest{Job: jobIn("dev", "web")}); structs.KindOf(err) != structs.KindInvalid {
		t.Fatalf("plan in a missing namespace: %v", err)
	}
	v, err := s.JobValidate(ctx, &structs.JobValidateRequest{Job: jobIn("dev", "web")})
	if err != nil || !strings.Contains(strings.Join(v.Problems, "\n"), `namespace "dev" does not exist`) {
		t.Fatalf("validate in a missing namespace: %+v, %v", v, err)
	}
	upsertNamespace(t, s, &structs.Namespace{Name: "dev"})
	registerJob(t, s, jobIn("dev", "web"))
	if j, _ := s.State().JobByID(nil, "dev", "web"); j == nil {
		t.Fatal("the job in an existing namespace was not stored")
	}
}

// TestFSMRefusesJobOfDeletedNamespace: the namespace is checked again when
// the registration applies, so that a namespace deleted meanwhile does not
// get a job.
func TestFSMRefusesJobOfDeletedNamespace(t *testing.T) {
	s := newTestServer(t, nil)
	job := jobIn("gone", "web")
	job.Canonicalize()
	_, _, err := s.raftApply(JobRegisterRequestType, &JobRegisterCommand{Job: job, CheckNamespace: true,
		Eval: &structs.Evaluation{ID: structs.GenerateUUID(), Namespace: "gone", JobID: "web", Status: structs.EvalStatusPending}})
	if structs.KindOf(err) != structs.KindInvalid || !strings.Contains(err.Error(), `namespace "gone" does not exist`) {
		t.Fatalf("apply: %v", err)
	}
	if j, _ := s.State().JobByID(nil, "gone", "web"); j != nil {
		t.Fatal("the job was stored")
	}
}

func TestNamespaceCapabilities(t *testing.T) {
	s := newTestServer(t, nil)
	upsertNamespace(t, s, &structs.Namespace{Name: "locked", Capabilities: &structs.NamespaceCapabilities{DisabledTaskDrivers: []string{"mock"}}})
	_, err := s.JobRegister(context.Background(), &structs.JobRegisterRequest{Job: jobIn("locked", "web")})
	if structs.KindOf(err) != structs.KindInvalid || !strings.Contains(err.Error(), `the task driver "mock" is not allowed in namespace "locked"`) {
		t.Fatalf("register a disabled driver: %v", err)
	}
	upsertNamespace(t, s, &structs.Namespace{Name: "open", Capabilities: &structs.NamespaceCapabilities{EnabledTaskDrivers: []string{"mock"}}})
	registerJob(t, s, jobIn("open", "web"))
}

func TestNamespaceDelete(t *testing.T) {
	s := newTestServer(t, nil)
	ctx := context.Background()
	del := func(name string) error {
		_, err := s.NamespaceDelete(ctx, &structs.NamespaceDeleteRequest{Names: []string{name}})
		return err
	}
	if err := del("default"); structs.KindOf(err) != structs.KindInvalid || !strings.Contains(err.Error(), "cannot be deleted") {
		t.Fatalf("delete default: %v", err)
	}
	if err := del("nope"); structs.KindOf(err) != structs.KindNotFound {
		t.Fatalf("delete unknown: %v", err)
	}
	upsertNamespace(t, s, &structs.Namespace{Name: "dev"})
	registerJob(t, s, jobIn("dev", "web"))
	if err := del("dev"); structs.KindOf(err) != structs.KindConflict || !strings.Contains(err.Error(), "web") {
		t.Fatalf("delete with a live job: %v", err)
	}
	if _, err := s.JobDeregister(ctx, &structs.JobDeregisterRequest{JobID: "web", Namespace: "dev", Purge: true}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.VarApply(ctx, &structs.VariablesApplyRequest{Op: structs.VarOpSet,
		Var: &structs.VariableDecrypted{VariableMetadata: structs.VariableMetadata{Namespace: "dev", Path: "app/db"}, Items: map[string]string{"k": "v"}}}); err != nil {
		t.Fatal(err)
	}
	if err := del("dev"); structs.KindOf(err) != structs.KindConflict || !strings.Contains(err.Error(), "app/db") {
		t.Fatalf("delete with a variable: %v", err)
	}
	if _, err := s.VarApply(ctx, &structs.VariablesApplyRequest{Op: structs.VarOpDelete,
		Var: &structs.VariableDecrypted{VariableMetadata: structs.VariableMetadata{Namespace: "dev", Path: "app/db"}}}); err != nil {
		t.Fatal(err)
	}
	if err := del("dev"); err != nil {
		t.Fatalf("delete an empty namespace: %v", err)
	}
	if ns, _ := s.State().NamespaceByName(nil, "dev"); ns != nil {
		t.Fatal("dev still exists")
	}
}

func TestVariableInUnknownNamespaceRefused(t *testing.T) {
	s := newTestServer(t, nil)
	ctx := context.Background()
	for _, op := range []string{structs.VarOpSet, structs.VarOpCAS, structs.VarOpLockAcquire} {
		in := &structs.VariableDecrypted{VariableMetadata: structs.VariableMetadata{Namespace: "dev", Path: "app/db"}, Items: map[string]string{"k": "v"}}
		if op == structs.VarOpLockAcquire {
			in.Lock = &structs.VariableLock{TTL: "10s"}
		}
		_, err := s.VarApply(ctx, &structs.VariablesApplyRequest{Op: op, Var: in})
		if structs.KindOf(err) != structs.KindInvalid || !strings.Contains(err.Error(), `namespace "dev" does not exist`) {
			t.Fatalf("%s in a missing namespace: %v", op, err)
		}
	}
	if v, _ := s.State().VariableByPath(nil, "dev", "app/db"); v != nil {
		t.Fatal("the variable was stored")
	}
	// Deleting what is not there stays harmless.
	if _, err := s.VarApply(ctx, &structs.VariablesApplyRequest{Op: structs.VarOpDelete,
		Var: &structs.VariableDecrypted{VariableMetadata: structs.VariableMetadata{Namespace: "dev", Path: "app/db"}}}); err != nil {
		t.Fatalf("delete in a missing namespace: %v", err)
	}
}

func TestListsHonourNamespace(t *testing.T) {
	s := newTestServer(t, nil)
	ctx := context.Background()
	upsertNamespace(t, s, &structs.Namespace{Name: "dev"})
	registerJob(t, s, testJob("a", 1, 100, 100))
	registerJob(t, s, jobIn("dev", "b"))
	for _, tc := range []struct{ ns, want string }{{"", "default/a"}, {"default", "default/a"}, {"dev", "dev/b"}, {"*", "default/a,dev/b"}, {"other", ""}} {
		jobs, err := s.JobList(ctx, &structs.JobListRequest{QueryOptions: structs.QueryOptions{Namespace: tc.ns}})
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, j := range jobs.Jobs {
			got = append(got, j.Namespace+"/"+j.ID)
		}
		if strings.Join(got, ",") != tc.want {
			t.Errorf("jobs of namespace %q: %v, want %s", tc.ns, got, tc.want)
		}
		evals, err := s.EvalList(ctx, &structs.EvalListRequest{QueryOptions: structs.QueryOptions{Namespace: tc.ns}})
		if err != nil {
			t.Fatal(err)
		}
		got = got[:0]
		for _, e := range evals.Evaluations {
			got = append(got, e.Namespace+"/"+e.JobID)
		}
		// Without nodes, each job has its evaluation and a blocked one.
		slices.Sort(got)
		if got = slices.Compact(got); strings.Join(got, ",") != tc.want {
			t.Errorf("evals of namespace %q: %v, want %s", tc.ns, got, tc.want)
		}
	}
}
