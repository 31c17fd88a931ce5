package acl

import (
	"strings"
	"testing"
)

func mustParse(t *testing.T, rules string) *Policy {
	t.Helper()
	p, err := Parse("test.hcl", rules)
	if err != nil {
		t.Fatalf("parse: %v", err)
	}
	return p
}

func TestParseErrors(t *testing.T) {
	cases := []struct {
		name, rules, want string
	}{
		{"empty", "  ", "no rules"},
		{"syntax", "namespace \"a\" {\n policy = \n}", "test.hcl:2:11: Invalid expression"},
		{"bad level", "namespace \"a\" {\n  policy = \"admin\"\n}", "test.hcl:2:12: invalid policy \"admin\""},
		{"bad capability", "namespace \"a\" {\n  capabilities = [\"read-job\", \"fly\"]\n}", "invalid capability \"fly\""},
		{"unknown block", "nodes {\n policy = \"read\"\n}", "test.hcl:1:1: unknown block \"nodes\""},
		{"unknown attr", "namespace \"a\" {\n  polcy = \"read\"\n}", "unknown attribute \"polcy\""},
		{"no label", "namespace {\n policy = \"read\"\n}", "takes one label"},
		{"bad node", "node {\n  policy = \"scale\"\n}", "invalid policy \"scale\""},
		{"bad var cap", "namespace \"a\" {\n variables {\n  path \"*\" { capabilities = [\"mount\"] }\n }\n}", "test.hcl:3:29: invalid capability \"mount\""},
		{"plugin write", "plugin {\n policy = \"write\"\n}", "invalid policy \"write\""},
		{"not a string", "agent = 3", "agent must be a string"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse("test.hcl", tc.rules)
			if err == nil {
				t.Fatalf("parse succeeded, want error containing %q", tc.want)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %q does not contain %q", err, tc.want)
			}
		})
	}
}

func TestNamespaceOperations(t *testing.T) {
	p := mustParse(t, `
namespace "default" {
  policy = "read"
}
namespace "prod-*" {
  policy = "write"
}
namespace "prod-secret" {
  policy = "deny"
}
namespace "prod-s*" {
  capabilities = ["list-jobs"]
}
namespace "ops" {
  policy       = "scale"
  capabilities = ["read-logs"]
}
namespace "*" {
  capabilities = ["parse-job"]
}
`)
	a := New(p)
	cases := []struct {
		ns, op string
		want   bool
	}{
		{"default", NamespaceCapabilityReadJob, true},
		{"default", NamespaceCapabilityListJobs, true},
		{"default", NamespaceCapabilitySubmitJob, false},
		{"prod-web", NamespaceCapabilitySubmitJob, true},
		{"prod-web", NamespaceCapabilityAllocExec, true},
		{"prod-secret", NamespaceCapabilityReadJob, false}, // exact deny wins over the glob
		{"prod-stage", NamespaceCapabilityListJobs, true},  // the more specific glob
		{"prod-stage", NamespaceCapabilitySubmitJob, false},
		{"ops", NamespaceCapabilityScaleJob, true},
		{"ops", NamespaceCapabilityReadLogs, true},
		{"ops", NamespaceCapabilitySubmitJob, false},
		{"other", NamespaceCapabilityParseJob, true},
		{"other", NamespaceCapabilityReadJob, false},
	}
	for _, tc := range cases {
		if got := a.AllowNamespaceOperation(tc.ns, tc.op); got != tc.want {
			t.Errorf("AllowNamespaceOperation(%q, %q) = %v, want %v", tc.ns, tc.op, got, tc.want)
		}
	}
	if a.IsManagement() {
		t.Error("a client ACL claims management")
	}
	if !ManagementACL().AllowNamespaceOperation("anything", NamespaceCapabilitySubmitJob) {
		t.Error("management is refused")
	}
	var none *ACL
	if none.AllowNamespaceOperation("default", NamespaceCapabilityReadJob) || none.AllowNodeRead() {
		t.Error("a nil ACL allows")
	}
}

func TestMergeDenyWins(t *testing.T) {
	a := New(
		mustParse(t, `namespace "default" { policy = "write" }
node { policy = "write" }
agent = "read"`),
		mustParse(t, `namespace "default" { capabilities = ["deny"] }
node { policy = "deny" }
agent = "write"`),
	)
	cases := []struct {
		name string
		got  bool
		want bool
	}{
		{"ns read", a.AllowNamespaceOperation("default", NamespaceCapabilityReadJob), false},
		{"node read", a.AllowNodeRead(), false},
		{"agent write", a.AllowAgentWrite(), true},
		{"agent read", a.AllowAgentRead(), true},
		{"operator read", a.AllowOperatorRead(), false},
	}
	for _, tc := range cases {
		if tc.got != tc.want {
			t.Errorf("%s = %v, want %v", tc.name, tc.got, tc.want)
		}
	}
}

func TestCoarseRules(t *testing.T) {
	cases := []struct {
		rules               string
		read, write         func(*ACL) bool
		wantRead, wantWrite bool
	}{
		{`node { policy = "read" }`, (*ACL).AllowNodeRead, (*ACL).AllowNodeWrite, true, false},
		{`node { policy = "write" }`, (*ACL).AllowNodeRead, (*ACL).AllowNodeWrite, true, true},
		{`agent { policy = "read" }`, (*ACL).AllowAgentRead, (*ACL).AllowAgentWrite, true, false},
		{`operator { policy = "write" }`, (*ACL).AllowOperatorRead, (*ACL).AllowOperatorWrite, true, true},
		{`quota { policy = "read" }`, (*ACL).AllowQuotaRead, (*ACL).AllowQuotaWrite, true, false},
		{`plugin { policy = "list" }`, (*ACL).AllowPluginList, (*ACL).AllowPluginRead, true, false},
		{`operator = "deny"`, (*ACL).AllowOperatorRead, (*ACL).AllowOperatorWrite, false, false},
	}
	for _, tc := range cases {
		a := New(mustParse(t, tc.rules))
		if got := tc.read(a); got != tc.wantRead {
			t.Errorf("%s: read = %v, want %v", tc.rules, got, tc.wantRead)
		}
		if got := tc.write(a); got != tc.wantWrite {
			t.Errorf("%s: write = %v, want %v", tc.rules, got, tc.wantWrite)
		}
	}
}

func TestVariables(t *testing.T) {
	a := New(mustParse(t, `
namespace "default" {
  policy = "read"
  variables {
    path "app/*" {
      capabilities = ["write", "read", "list", "destroy"]
    }
    path "app/secret/*" {
      capabilities = ["deny"]
    }
  }
}
namespace "dev" {
  variables {
    path "*" { capabilities = ["list"] }
  }
}
`))
	cases := []struct {
		ns, path, op string
		want         bool
	}{
		{"default", "app/web", VariablesCapabilityWrite, true},
		{"default", "app/web", VariablesCapabilityDestroy, true},
		{"default", "app/secret/key", VariablesCapabilityRead, false},
		{"default", "other", VariablesCapabilityRead, true}, // policy read: read on every path
		{"default", "other", VariablesCapabilityWrite, false},
		{"dev", "x", VariablesCapabilityList, true},
		{"dev", "x", VariablesCapabilityRead, false},
		{"prod", "x", VariablesCapabilityList, false},
	}
	for _, tc := range cases {
		if got := a.AllowVariableOperation(tc.ns, tc.path, tc.op); got != tc.want {
			t.Errorf("AllowVariableOperation(%q, %q, %q) = %v, want %v", tc.ns, tc.path, tc.op, got, tc.want)
		}
	}
	if !a.AllowNamespace("dev") || a.AllowNamespace("prod") {
		t.Error("AllowNamespace wrong")
	}
}

func TestHostVolumes(t *testing.T) {
	a := New(mustParse(t, `
host_volume "data-*" { policy = "write" }
host_volume "data-ro" { policy = "read" }
host_volume "secret" { policy = "deny" }
`))
	cases := []struct {
		name, op string
		want     bool
	}{
		{"data-a", HostVolumeCapabilityMountReadWrite, true},
		{"data-ro", HostVolumeCapabilityMountReadWrite, false},
		{"data-ro", HostVolumeCapabilityMountReadOnly, true},
		{"secret", HostVolumeCapabilityMountReadOnly, false},
		{"other", HostVolumeCapabilityMountReadOnly, false},
	}
	for _, tc := range cases {
		if got := a.AllowHostVolumeOperation(tc.name, tc.op); got != tc.want {
			t.Errorf("AllowHostVolumeOperation(%q, %q) = %v, want %v", tc.name, tc.op, got, tc.want)
		}
	}
}

func TestRequirementAllows(t *testing.T) {
	a := New(mustParse(t, `namespace "default" { policy = "read" }
node = "read"`))
	cases := []struct {
		r    Requirement
		t    Target
		acl  *ACL
		want bool
	}{
		{Public(), Target{}, nil, true},
		{AnyToken(), Target{}, nil, false},
		{AnyToken(), Target{}, a, true},
		{Management(), Target{}, a, false},
		{Management(), Target{}, ManagementACL(), true},
		{Namespace(NamespaceCapabilityReadJob), Target{}, a, true},
		{Namespace(NamespaceCapabilityReadJob), Target{Namespace: "prod"}, a, false},
		{Namespace(NamespaceCapabilityReadJob), Target{Namespace: "*"}, a, true},
		{Namespace(NamespaceCapabilitySubmitJob), Target{Namespace: "*"}, a, false},
		{Variable(VariablesCapabilityRead), Target{Path: "x"}, a, true},
		{Variable(VariablesCapabilityWrite), Target{Path: "x"}, a, false},
		{NodeRead(), Target{}, a, true},
		{NodeWrite(), Target{}, a, false},
		{NodeSecret(), Target{}, ManagementACL(), false},
		{Requirement{}, Target{}, ManagementACL(), false},
	}
	for i, tc := range cases {
		if got := tc.acl.Allows(tc.r, tc.t); got != tc.want {
			t.Errorf("%d: %s on %+v = %v, want %v", i, tc.r, tc.t, got, tc.want)
		}
	}
}

func TestGlobMatch(t *testing.T) {
	cases := []struct {
		pattern, name string
		want          bool
	}{
		{"*", "", true},
		{"*", "abc", true},
		{"a*", "abc", true},
		{"a*", "ba", false},
		{"*c", "abc", true},
		{"a*c", "abbbc", true},
		{"a*c", "abd", false},
		{"a*b*c", "axbyc", true},
		{"a*b*c", "axcyb", false},
		{"abc", "abc", true},
	}
	for _, tc := range cases {
		if got := globMatch(tc.pattern, tc.name); got != tc.want {
			t.Errorf("globMatch(%q, %q) = %v, want %v", tc.pattern, tc.name, got, tc.want)
		}
	}
}
