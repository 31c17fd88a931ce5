package allocrunner

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/drover-io/drover/structs"
)

func servicesAlloc(group []*structs.Service, task []*structs.Service) *structs.Allocation {
	web := mockTask("web", nil)
	web.Services = task
	sidecar := mockTask("init", nil)
	sidecar.Lifecycle = &structs.TaskLifecycle{Hook: structs.TaskLifecycleHookPrestart}
	alloc := testAlloc(structs.JobTypeService, sidecar, web)
	alloc.Job.TaskGroups[0].Services = group
	alloc.AllocatedResources = &structs.AllocatedResources{Shared: structs.AllocatedSharedResources{
		Ports: structs.AllocatedPorts{{Label: "http", Value: 25000, To: 8080, HostIP: "10.0.0.5"}},
	}}
	alloc.Job.Canonicalize()
	return alloc
}

func TestDesiredServices(t *testing.T) {
	node := &structs.Node{ID: "node1", Datacenter: "dc1", Attributes: map[string]string{"unique.network.ip-address": "10.0.0.9"}}
	nomad := func(s *structs.Service) *structs.Service { s.Provider = structs.ServiceProviderNomad; return s }
	running := &structs.TaskState{State: structs.TaskStateRunning}
	dead := &structs.TaskState{State: structs.TaskStateDead}
	env := map[string]string{"NOMAD_JOB_NAME": "job", "NOMAD_ALLOC_INDEX": "0", "NOMAD_TASK_NAME": "web"}
	tests := []struct {
		name     string
		group    []*structs.Service
		task     []*structs.Service
		states   map[string]*structs.TaskState
		stopping bool
		canary   bool
		want     []string // "name addr:port [tags]"
		wantErr  string
	}{
		{name: "task service while its task runs, interpolated",
			task:   []*structs.Service{nomad(&structs.Service{Name: "${NOMAD_JOB_NAME}-api", PortLabel: "http", Tags: []string{"i${NOMAD_ALLOC_INDEX}", "${node.datacenter}"}})},
			states: map[string]*structs.TaskState{"web": running},
			want:   []string{"job-api 10.0.0.5:25000 [i0 dc1]"}},
		{name: "nothing once the task is dead", task: []*structs.Service{nomad(&structs.Service{Name: "api", PortLabel: "http"})},
			states: map[string]*structs.TaskState{"web": dead}},
		{name: "group service follows the main tasks, not the prestart one",
			group:  []*structs.Service{nomad(&structs.Service{Name: "web", PortLabel: "http"})},
			states: map[string]*structs.TaskState{"init": running, "web": {State: structs.TaskStatePending}}},
		{name: "group service, alloc address mode gives the to port",
			group:  []*structs.Service{nomad(&structs.Service{Name: "web", PortLabel: "http", AddressMode: structs.AddressModeAlloc})},
			states: map[string]*structs.TaskState{"web": running},
			want:   []string{"web 10.0.0.5:8080 []"}},
		{name: "numeric port and no port use the node's address",
			group:  []*structs.Service{nomad(&structs.Service{Name: "a", PortLabel: "9000"}), nomad(&structs.Service{Name: "b"})},
			states: map[string]*structs.TaskState{"web": running},
			want:   []string{"a 10.0.0.9:9000 []", "b 10.0.0.9:0 []"}},
		{name: "canary tags for a canary",
			task:   []*structs.Service{nomad(&structs.Service{Name: "api", PortLabel: "http", Tags: []string{"live"}, CanaryTags: []string{"canary"}})},
			states: map[string]*structs.TaskState{"web": running}, canary: true,
			want: []string{"api 10.0.0.5:25000 [canary]"}},
		{name: "consul services are not Drover's",
			task:   []*structs.Service{{Name: "api", PortLabel: "http", Provider: "consul"}},
			states: map[string]*structs.TaskState{"web": running}},
		{name: "stopping: nothing", task: []*structs.Service{nomad(&structs.Service{Name: "api", PortLabel: "http"})},
			states: map[string]*structs.TaskState{"web": running}, stopping: true},
		{name: "unknown port reported", task: []*structs.Service{nomad(&structs.Service{Name: "api", PortLabel: "grpc"})},
			states: map[string]*structs.TaskState{"web": running}, wantErr: `service "api": port "grpc" is not a port of the allocation`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			alloc := servicesAlloc(tt.group, tt.task)
			if tt.canary {
				alloc.DeploymentStatus = &structs.AllocDeploymentStatus{Canary: true}
			}
			got, errs := desiredServices(serviceInputs{alloc: alloc, node: node, states: tt.states,
				envs: map[string]map[string]string{"web": env}, stopping: tt.stopping})
			if tt.wantErr != "" {
				if len(errs) != 1 || errs[0].Error() != tt.wantErr {
					t.Fatalf("errs = %v, want %q", errs, tt.wantErr)
				}
				return
			}
			if len(errs) > 0 {
				t.Fatalf("errs = %v", errs)
			}
			var lines []string
			for _, inst := range got {
				r := inst.reg
				if r.AllocID != alloc.ID || r.NodeID != "node1" || r.JobID != "job" || r.Namespace != "default" || r.Datacenter != "dc1" {
					t.Errorf("registration %+v lacks the alloc's identity", r)
				}
				lines = append(lines, fmt.Sprintf("%s %s:%d %v", r.ServiceName, r.Address, r.Port, r.Tags))
			}
			if fmt.Sprint(sorted(lines)) != fmt.Sprint(sorted(tt.want)) {
				t.Errorf("registered %q, want %q", lines, tt.want)
			}
		})
	}
}

func sorted(s []string) []string {
	out := slices.Clone(s)
	slices.Sort(out)
	return out
}

func TestCheckCounter(t *testing.T) {
	tests := []struct {
		name  string
		check structs.ServiceCheck
		probe []bool
		want  []string
	}{
		{"defaults: each result counts", structs.ServiceCheck{}, []bool{true, false, true},
			[]string{"success", "failure", "success"}},
		{"two successes before passing, three failures before critical",
			structs.ServiceCheck{SuccessBeforePassing: 2, FailuresBeforeCritical: 3},
			[]bool{true, true, false, false, true, false, false, false},
			[]string{"pending", "success", "success", "success", "success", "success", "success", "failure"}},
		{"initial status critical", structs.ServiceCheck{InitialStatus: "critical", SuccessBeforePassing: 2}, []bool{true, true},
			[]string{"failure", "success"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := newCheckCounter(&tt.check)
			var got []string
			for _, ok := range tt.probe {
				got = append(got, c.record(ok))
			}
			if fmt.Sprint(got) != fmt.Sprint(tt.want) {
				t.Errorf("statuses = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestCheckRestarter(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	if newCheckRestarter(&structs.ServiceCheck{}) != nil || newCheckRestarter(&structs.ServiceCheck{CheckRestart: &structs.CheckRestart{}}) != nil {
		t.Fatal("a check without a check_restart limit restarts")
	}
	r := newCheckRestarter(&structs.ServiceCheck{CheckRestart: &structs.CheckRestart{Limit: 2, Grace: 10 * time.Second}})
	steps := []struct {
		at     time.Duration
		status string
		want   bool
	}{
		{1 * time.Second, "failure", false}, // within grace: not counted
		{9 * time.Second, "failure", false},
		{11 * time.Second, "failure", false}, // 1
		{12 * time.Second, "success", false}, // resets
		{13 * time.Second, "failure", false}, // 1
		{14 * time.Second, "pending", false}, // resets
		{15 * time.Second, "failure", false}, // 1
		{16 * time.Second, "failure", true},  // 2: restart, count starts again
		{17 * time.Second, "failure", false},
	}
	for i, s := range steps {
		if got := r.observe(s.status, t0.Add(s.at), t0); got != s.want {
			t.Errorf("step %d (%v %s): restart = %v, want %v", i, s.at, s.status, got, s.want)
		}
	}
}

func TestHealthTrackerWithChecks(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	at := func(d time.Duration) time.Time { return t0.Add(d) }
	tg := &structs.TaskGroup{Tasks: []*structs.Task{{Name: "web", Services: []*structs.Service{{Name: "web", Provider: "nomad",
		Checks: []*structs.ServiceCheck{{Name: "c", Type: "tcp"}}}}}}}
	u := &structs.UpdateStrategy{HealthCheck: structs.UpdateStrategyHealthCheckChecks, MinHealthyTime: 10 * time.Second, HealthyDeadline: time.Minute}
	states := map[string]*structs.TaskState{"web": {State: structs.TaskStateRunning, StartedAt: at(time.Second)}}
	tests := []struct {
		name string
		now  time.Duration
		cs   checkStatus
		want healthVerdict
		next time.Time
	}{
		{"tasks healthy, checks not passing: wait for the deadline", 20 * time.Second, checkStatus{}, healthPending, at(time.Minute)},
		{"checks passing, not long enough", 20 * time.Second, checkStatus{passing: true, since: at(15 * time.Second)}, healthPending, at(25 * time.Second)},
		{"checks passing long enough", 26 * time.Second, checkStatus{passing: true, since: at(15 * time.Second)}, healthHealthy, time.Time{}},
		{"deadline passes with failing checks", time.Minute, checkStatus{}, healthUnhealthy, time.Time{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tr := newHealthTracker(tg, u, t0)
			if !tr.useChecks {
				t.Fatal("tracker ignores the group's checks")
			}
			got, next := tr.checkWith(at(tt.now), states, tt.cs)
			if got != tt.want || !next.Equal(tt.next) {
				t.Errorf("checkWith = %v, %v; want %v, %v", got, next, tt.want, tt.next)
			}
		})
	}
	u.HealthCheck = structs.UpdateStrategyHealthCheckTaskStates
	if newHealthTracker(tg, u, t0).useChecks {
		t.Error("health_check task_states uses the checks")
	}
}

func TestResultStale(t *testing.T) {
	alive := &structs.ServiceCheck{Name: "alive", Type: structs.ServiceCheckHTTP, Path: "/"}
	changed := &structs.ServiceCheck{Name: "alive", Type: structs.ServiceCheckHTTP, Path: "/health"}
	old := &checkTarget{check: alive, addr: "127.0.0.1", port: 80}
	cases := []struct {
		name    string
		want    *checkTarget
		defined []*structs.ServiceCheck
		stale   bool
	}{
		{"its task stopped: the check is still defined", nil, []*structs.ServiceCheck{alive}, false},
		{"removed by an in-place update", nil, []*structs.ServiceCheck{changed}, true},
		{"its definition changed", &checkTarget{check: changed, addr: "127.0.0.1", port: 80}, []*structs.ServiceCheck{changed}, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := resultStale(old, c.want, c.defined); got != c.stale {
				t.Errorf("resultStale = %v, want %v", got, c.stale)
			}
		})
	}
}
