package server

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/drover-io/drover/structs"
)

// mountingJob is testJob whose task, of driver, mounts a host volume.
func mountingJob(id, driver string) *structs.Job {
	j := testJob(id, 1, 100, 100)
	tg := j.TaskGroups[0]
	tg.Volumes = map[string]*structs.VolumeRequest{"data": {Name: "data", Type: structs.VolumeTypeHost, Source: "shared"}}
	tg.Tasks[0].Driver = driver
	tg.Tasks[0].VolumeMounts = []*structs.VolumeMount{{Volume: "data", Destination: "/data"}}
	return j
}

func TestCheckMountDrivers(t *testing.T) {
	node := func(drivers map[string]*structs.DriverInfo) *structs.Node {
		n := testNode("n", 1000, 1000)
		n.Drivers = drivers
		return n
	}
	cannot := &structs.DriverInfo{Detected: true, Healthy: true, MountsUnsupported: true}
	can := &structs.DriverInfo{Detected: true, Healthy: true}
	cases := []struct {
		name  string
		job   *structs.Job
		nodes []*structs.Node
		want  string // substring of the error; "" accepts
	}{
		{"driver that cannot mount", mountingJob("j", "raw_exec"),
			[]*structs.Node{node(map[string]*structs.DriverInfo{"raw_exec": cannot})},
			`group "web", task "app": driver "raw_exec" cannot mount volumes into its tasks (volume_mount)`},
		{"driver that can", mountingJob("j", "exec"),
			[]*structs.Node{node(map[string]*structs.DriverInfo{"exec": can, "raw_exec": cannot})}, ""},
		{"driver no node knows", mountingJob("j", "raw_exec"), []*structs.Node{node(nil)}, ""},
		{"driver undetected where it cannot mount", mountingJob("j", "raw_exec"),
			[]*structs.Node{node(map[string]*structs.DriverInfo{"raw_exec": {MountsUnsupported: true}})}, ""},
		{"one node of many can", mountingJob("j", "custom"), []*structs.Node{
			node(map[string]*structs.DriverInfo{"custom": cannot}),
			node(map[string]*structs.DriverInfo{"custom": can})}, ""},
		{"no mounts", testJob("j", 1, 100, 100),
			[]*structs.Node{node(map[string]*structs.DriverInfo{"mock": cannot})}, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := checkMountDrivers(tc.job, func() ([]*structs.Node, error) { return tc.nodes, nil })
			if tc.want == "" {
				if err != nil {
					t.Fatalf("checkMountDrivers: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) || structs.KindOf(err) != structs.KindInvalid {
				t.Fatalf("checkMountDrivers = %v, want an invalid error with %q", err, tc.want)
			}
		})
	}
	// Nodes are read only for a job that mounts something.
	boom := errors.New("boom")
	if err := checkMountDrivers(testJob("j", 1, 100, 100), func() ([]*structs.Node, error) { return nil, boom }); err != nil {
		t.Errorf("a job without mounts read the nodes: %v", err)
	}
	if err := checkMountDrivers(mountingJob("j", "exec"), func() ([]*structs.Node, error) { return nil, boom }); !errors.Is(err, boom) {
		t.Errorf("a failed node read = %v, want it returned", err)
	}
}

// TestRegisterRefusesMountsOfADriverThatCannot: the job is refused at
// submission (register and plan) and nothing is stored.
func TestRegisterRefusesMountsOfADriverThatCannot(t *testing.T) {
	s := newTestServer(t, nil)
	n := testNode("n1", 1000, 1000)
	n.Drivers["raw_exec"] = &structs.DriverInfo{Detected: true, Healthy: true, MountsUnsupported: true}
	registerNode(t, s, n)
	job := mountingJob("vol", "raw_exec")
	_, err := s.JobRegister(context.Background(), &structs.JobRegisterRequest{Job: job})
	if err == nil || !strings.Contains(err.Error(), `driver "raw_exec" cannot mount volumes`) {
		t.Fatalf("JobRegister = %v, want the mount refusal", err)
	}
	if _, err := s.JobPlan(context.Background(), &structs.JobPlanRequest{Job: job}); err == nil || !strings.Contains(err.Error(), "cannot mount volumes") {
		t.Fatalf("JobPlan = %v, want the mount refusal", err)
	}
	if got, _ := s.State().JobByID(nil, structs.DefaultNamespace, "vol"); got != nil {
		t.Fatal("the refused job was stored")
	}
	registerJob(t, s, mountingJob("vol", "mock"))
}
