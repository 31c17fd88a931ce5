package command

import (
	"flag"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/drover-io/drover/api"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

// fixedNow is "now" in every rendering test.
var fixedNow = time.Date(2026, 1, 4, 15, 0, 0, 0, time.UTC)

// at returns fixedNow moved by d, as Unix nanoseconds.
func at(d time.Duration) int64 { return fixedNow.Add(d).UnixNano() }

// golden compares got with testdata/name.golden, or rewrites it with -update.
func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name+".golden")
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("read golden file (run go test -update to create it): %v", err)
	}
	if got != string(want) {
		t.Errorf("output differs from %s (run go test -update to accept):\n--- got\n%s\n--- want\n%s", path, got, want)
	}
}

func TestTimeAgo(t *testing.T) {
	cases := []struct {
		d    time.Duration
		want string
	}{
		{0, "now"},
		{400 * time.Millisecond, "now"},
		{45 * time.Second, "45s ago"},
		{2 * time.Minute, "2m ago"},
		{2*time.Minute + 10*time.Second, "2m10s ago"},
		{time.Hour + 5*time.Minute + 3*time.Second, "1h5m ago"},
		{2 * time.Hour, "2h ago"},
		{2*time.Hour + 30*time.Second, "2h ago"},
		{76 * time.Hour, "3d4h ago"},
		{-5 * time.Second, "in 5s"},
	}
	for _, tc := range cases {
		if got := timeAgo(fixedNow.Add(-tc.d), fixedNow); got != tc.want {
			t.Errorf("timeAgo(-%s) = %q, want %q", tc.d, got, tc.want)
		}
	}
	if got := timeAgo(time.Time{}, fixedNow); got != "<none>" {
		t.Errorf("zero time = %q", got)
	}
}

func TestFormatTableTrimsAndAligns(t *testing.T) {
	got := formatTable([]string{"A", "Long Header", "C"}, [][]string{{"x", "y", ""}, {"wide value", "", "z"}})
	want := "A           Long Header  C\nx           y\nwide value               z\n"
	if got != want {
		t.Errorf("got\n%q\nwant\n%q", got, want)
	}
}

func fixtureJobList() []*api.JobListStub {
	return []*api.JobListStub{
		{ID: "countdown", Type: "batch", Priority: 50, Status: "dead", SubmitTime: at(-time.Hour)},
		{ID: "hello", Type: "service", Priority: 70, Status: "running", SubmitTime: at(-2 * time.Minute)},
		{ID: "old", Type: "service", Priority: 50, Status: "dead", Stop: true, SubmitTime: at(-48 * time.Hour)},
	}
}

func fixtureMetric() *api.AllocationMetric {
	return &api.AllocationMetric{
		NodesEvaluated:     1,
		NodesFiltered:      1,
		NodesAvailable:     map[string]int{"dc1": 1},
		ConstraintFiltered: map[string]int{"${attr.kernel.name} = windows": 1},
		NodesExhausted:     1,
		DimensionExhausted: map[string]int{"memory": 1},
	}
}

func fixtureJobStatus() jobStatus {
	return jobStatus{
		Job: &api.Job{
			ID: api.String("hello"), Name: api.String("hello"), Type: api.String("service"),
			Priority: api.Int(50), Datacenters: []string{"*"}, Namespace: api.String("default"),
			Status: api.String("running"), SubmitTime: func() *int64 { v := at(-5 * time.Minute); return &v }(),
			TaskGroups: []*api.TaskGroup{{Name: api.String("web")}, {Name: api.String("db")}},
		},
		Summary: &api.JobSummary{JobID: "hello", Summary: map[string]api.TaskGroupSummary{
			"web": {Running: 2, Failed: 1},
			"db":  {Queued: 1},
		}},
		Evals: []*api.Evaluation{
			{ID: "blocked0-0000-0000-0000-000000000000", Status: "blocked", CreateIndex: 12},
			{ID: "ab12cd34-0000-0000-0000-000000000000", Status: "complete", CreateIndex: 11,
				FailedTGAllocs: map[string]*api.AllocationMetric{"db": fixtureMetric()}},
		},
		Allocs: []*api.AllocationListStub{
			{ID: "1234abcd-1111-2222-3333-444455556666", NodeID: "5678efgh-1111-2222-3333-444455556666", TaskGroup: "web",
				JobVersion: 0, DesiredStatus: "run", ClientStatus: "running", CreateTime: at(-2 * time.Minute), ModifyTime: at(-90 * time.Second)},
			{ID: "2234abcd-1111-2222-3333-444455556666", NodeID: "5678efgh-1111-2222-3333-444455556666", TaskGroup: "web",
				JobVersion: 1, DesiredStatus: "run", ClientStatus: "failed", CreateTime: at(-3*time.Hour - 4*time.Minute), ModifyTime: at(-3 * time.Hour)},
		},
	}
}

func fixtureAlloc() *api.Allocation {
	base := time.Date(2026, 1, 4, 14, 58, 49, 0, time.UTC)
	ev := func(d time.Duration, typ, msg string) *api.TaskEvent {
		return &api.TaskEvent{Type: typ, Time: base.Add(d).UnixNano(), DisplayMessage: msg}
	}
	return &api.Allocation{
		ID: "1234abcd-1111-2222-3333-444455556666", EvalID: "ab12cd34-0000-0000-0000-000000000000",
		Name: "hello.web[0]", NodeID: "5678efgh-1111-2222-3333-444455556666", NodeName: "dev",
		JobID: "hello", Job: &api.Job{Version: func() *uint64 { v := uint64(0); return &v }()},
		TaskGroup: "web", ClientStatus: "complete", ClientDescription: "All tasks have completed",
		DesiredStatus: "stop", DesiredDescription: "alloc is being stopped because the job was stopped",
		CreateTime: at(-2 * time.Minute), ModifyTime: at(-10 * time.Second),
		AllocatedResources: &api.AllocatedResources{
			Tasks:  map[string]*api.AllocatedTaskResources{"greeter": {Cpu: api.AllocatedCpuResources{CpuShares: 50}, Memory: api.AllocatedMemoryResources{MemoryMB: 32}}},
			Shared: api.AllocatedSharedResources{DiskMB: 300},
		},
		TaskStates: map[string]*api.TaskState{
			"greeter": {
				State: "dead", StartedAt: base.Add(time.Second), FinishedAt: base.Add(2 * time.Second),
				Events: []*api.TaskEvent{
					ev(0, "Received", "Task received by client"),
					ev(0, "Task Setup", "Building Task Directory"),
					ev(time.Second, "Started", "Task started by client"),
					ev(2*time.Second, "Killing", "Sent interrupt. Waiting 5s before force killing"),
					ev(2*time.Second, "Terminated", "Exit Code: 130, Signal: 2"),
					ev(2*time.Second, "Killed", "Task successfully killed"),
				},
			},
		},
	}
}

func fixtureNode() (*api.Node, []*api.Allocation) {
	n := &api.Node{
		ID: "5678efgh-1111-2222-3333-444455556666", Name: "dev", NodePool: "default", Datacenter: "dc1",
		HTTPAddr: "127.0.0.1:4646", SchedulingEligibility: "eligible", Status: "ready",
		Attributes: map[string]string{"kernel.name": "linux", "cpu.arch": "amd64"},
		Drivers: map[string]*api.DriverInfo{
			"raw_exec":    {Detected: true, Healthy: true, HealthDescription: "Healthy", UpdateTime: fixedNow.Add(-time.Hour)},
			"mock_driver": {Detected: true, Healthy: true, HealthDescription: "Healthy", UpdateTime: fixedNow.Add(-time.Hour)},
			"docker":      {Detected: false, Healthy: false, HealthDescription: "Docker is not installed"},
		},
		NodeResources: &api.NodeResources{Cpu: api.NodeCpuResources{CpuShares: 4000}, Memory: api.NodeMemoryResources{MemoryMB: 8192}, Disk: api.NodeDiskResources{DiskMB: 50000}},
	}
	a := fixtureAlloc()
	a.ClientStatus, a.DesiredStatus = "running", "run"
	return n, []*api.Allocation{a}
}

func TestGoldenOutput(t *testing.T) {
	node, nodeAllocs := fixtureNode()
	ambiguous := fixtureJobStatus().Allocs
	cases := []struct {
		name string
		got  string
	}{
		{"job_list", formatJobList(fixtureJobList())},
		{"job_status", formatJobStatus(fixtureJobStatus(), fixedNow, false)},
		{"job_status_verbose", formatJobStatus(fixtureJobStatus(), fixedNow, true)},
		{"job_status_evals", formatJobStatus(func() jobStatus {
			s := fixtureJobStatus()
			s.ShowEvals = true
			s.Evals = []*api.Evaluation{
				{ID: "e1e1e1e1-0000-0000-0000-000000000000", Priority: 50, TriggeredBy: "job-scaling", Status: "complete"},
				{ID: "e2e2e2e2-0000-0000-0000-000000000000", Priority: 50, TriggeredBy: "job-register", Status: "complete",
					FailedTGAllocs: map[string]*api.AllocationMetric{"web": {}}},
			}
			return s
		}(), fixedNow, false)},
		{"scaling_events", formatScalingEvents(&api.JobScaleStatusResponse{TaskGroups: map[string]api.TaskGroupScaleStatus{
			"web": {Events: []api.ScalingEvent{{Count: func() *int64 { v := int64(3); return &v }(), PreviousCount: 1,
				Time: uint64(at(-time.Minute)), Message: "submitted using the drover CLI"}}},
		}}, true)},
		{"alloc_status", formatAllocStatus(fixtureAlloc(), nil, fixedNow, false)},
		{"alloc_status_verbose", formatAllocStatus(fixtureAlloc(), nil, fixedNow, true)},
		{"alloc_status_placement_metrics", formatAllocStatus(func() *api.Allocation {
			a := fixtureAlloc()
			a.Metrics = &api.AllocationMetric{NodesEvaluated: 40, NodesFiltered: 3, NodesInPool: 40,
				ConstraintFiltered: map[string]int{"${meta.rack} != r3": 3},
				ScoreMetaData: []*api.NodeScoreMeta{
					{NodeID: a.NodeID, Scores: map[string]float64{"binpack": 0.406, "node-affinity": 1, "allocation-spread": 0.5}, NormScore: 1.906},
					{NodeID: "9999aaaa-1111-2222-3333-444455556666", Scores: map[string]float64{"binpack": 0.226, "node-affinity": 0, "allocation-spread": 1}, NormScore: 1.226},
				}}
			return a
		}(), nil, fixedNow, true)},
		{"alloc_list", formatAllocList(ambiguous, fixedNow, false, false)},
		{"node_list", formatNodeList([]*api.NodeListStub{
			{ID: node.ID, NodePool: "default", Datacenter: "dc1", Name: "dev", SchedulingEligibility: "eligible", Status: "ready"},
			{ID: "9999aaaa-1111", Datacenter: "dc2", Name: "edge", NodeClass: "gpu", Drain: true, SchedulingEligibility: "ineligible", Status: "down"},
		}, false)},
		{"node_status", formatNodeStatus(node, nodeAllocs, fixedNow, false)},
		{"node_status_networks", formatNodeStatus(fixtureNetworkNode(), nil, fixedNow, true)},
		{"alloc_status_ports", formatAllocStatus(fixturePortsAlloc(), nil, fixedNow, false)},
		{"alloc_status_bridge", formatAllocStatus(fixtureBridgeAlloc(), nil, fixedNow, false)},
		{"placement_failure", placementFailures(map[string]*api.AllocationMetric{
			"web": fixtureMetric(),
			"db":  {NodesEvaluated: 0, CoalescedFailures: 2, NodesAvailable: map[string]int{"dc2": 0}, QuotaExhausted: []string{"cpu"}},
		}, "    ")},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) { golden(t, tc.name, tc.got) })
	}
}

func TestEventsNewestFirstAndLimited(t *testing.T) {
	var evs []*api.TaskEvent
	for i := range 15 {
		evs = append(evs, &api.TaskEvent{Type: "Driver", Time: at(time.Duration(i) * time.Second), DisplayMessage: string(rune('a' + i))})
	}
	short := formatTaskEvents(evs, false)
	if n := countLines(short); n != recentEvents+1 {
		t.Errorf("got %d lines, want %d:\n%s", n, recentEvents+1, short)
	}
	full := formatTaskEvents(evs, true)
	if n := countLines(full); n != 16 {
		t.Errorf("verbose: got %d lines, want 16", n)
	}
	// The first row is the newest event ("o").
	if lines := splitLines(full); lines[1][len(lines[1])-1] != 'o' {
		t.Errorf("first row is not the newest: %q", lines[1])
	}
}

func countLines(s string) int { return len(splitLines(s)) }

func splitLines(s string) []string {
	var out []string
	start := 0
	for i, c := range s {
		if c == '\n' {
			out = append(out, s[start:i])
			start = i + 1
		}
	}
	return out
}
