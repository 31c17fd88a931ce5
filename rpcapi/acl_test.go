package rpcapi

import (
	"testing"

	"github.com/drover-io/drover/acl"
	"github.com/drover-io/drover/structs"
)

// TestEveryMethodDeclaresRequirement fails when a method has no ACL
// requirement: add it to requirements in acl.go.
func TestEveryMethodDeclaresRequirement(t *testing.T) {
	all := append(All(), ServiceRegistrationUpsert.info, ServiceRegistrationDelete.info,
		ServiceRegistrationList.info, ServiceRegistrationGet.info)
	for _, m := range all {
		if !m.Requirement().Declared() {
			t.Errorf("rpc %s declares no ACL requirement: add one to requirements (rpcapi/acl.go)", m.Name())
		}
	}
}

func TestTarget(t *testing.T) {
	cases := []struct {
		name string
		req  any
		want acl.Target
	}{
		{"query options", &structs.JobSpecificRequest{QueryOptions: structs.QueryOptions{Namespace: "prod"}}, acl.Target{Namespace: "prod"}},
		{"default", &structs.JobSpecificRequest{}, acl.Target{Namespace: "default"}},
		{"job", &structs.JobRegisterRequest{Job: &structs.Job{Namespace: "web"}}, acl.Target{Namespace: "web"}},
		{"field", &structs.JobDeregisterRequest{Namespace: "x"}, acl.Target{Namespace: "x"}},
		{"variable read", &structs.VariablesReadRequest{Path: "a/b", QueryOptions: structs.QueryOptions{Namespace: "n"}}, acl.Target{Namespace: "n", Path: "a/b"}},
		{"nil", (*structs.JobRegisterRequest)(nil), acl.Target{Namespace: "default"}},
	}
	for _, tc := range cases {
		if got := Target(tc.req); got != tc.want {
			t.Errorf("%s: Target = %+v, want %+v", tc.name, got, tc.want)
		}
	}
}
