package allocrunner

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/drover-io/drover/client/state"
	"github.com/drover-io/drover/drivers/mock"
	"github.com/drover-io/drover/plugins/drivers"
	"github.com/drover-io/drover/structs"
)

// fakeRegistrar is the servers' service registrations of one node.
type fakeRegistrar struct {
	mu      sync.Mutex // guards the fields below
	regs    map[string]*structs.ServiceRegistration
	upserts int
	fail    int           // the next fail calls fail
	changed chan struct{} // closed (and replaced) at each call
}

func newFakeRegistrar() *fakeRegistrar {
	return &fakeRegistrar{regs: map[string]*structs.ServiceRegistration{}, changed: make(chan struct{})}
}

// called wakes the waiters of a call; f.mu is held.
func (f *fakeRegistrar) called() {
	close(f.changed)
	f.changed = make(chan struct{})
}

// wait waits until cond holds, re-checking it after each call the hook
// makes (an event, not a poll).
func (f *fakeRegistrar) wait(t *testing.T, what string, cond func() bool) {
	t.Helper()
	bound := time.NewTimer(hungBound)
	defer bound.Stop()
	for {
		f.mu.Lock()
		changed := f.changed
		f.mu.Unlock()
		if cond() {
			return
		}
		select {
		case <-changed:
		case <-bound.C:
			t.Fatalf("no %s after %s", what, hungBound)
		}
	}
}

var errUnreachable = errors.New("no servers")

func (f *fakeRegistrar) failing() bool {
	if f.fail > 0 {
		f.fail--
		return true
	}
	return false
}

func (f *fakeRegistrar) UpsertServices(_ context.Context, regs []*structs.ServiceRegistration) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	defer f.called()
	if f.failing() {
		return errUnreachable
	}
	for _, r := range regs {
		f.regs[r.ID] = r.Copy()
		f.upserts++
	}
	return nil
}

func (f *fakeRegistrar) DeleteServices(_ context.Context, _ string, ids []string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	defer f.called()
	if f.failing() {
		return errUnreachable
	}
	for _, id := range ids {
		delete(f.regs, id)
	}
	return nil
}

func (f *fakeRegistrar) DeleteAllocServices(_ context.Context, allocID string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	defer f.called()
	if f.failing() {
		return errUnreachable
	}
	for id, r := range f.regs {
		if r.AllocID == allocID {
			delete(f.regs, id)
		}
	}
	return nil
}

func (f *fakeRegistrar) AllocServices(_ context.Context, allocID string) ([]*structs.ServiceRegistration, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	defer f.called()
	if f.failing() {
		return nil, errUnreachable
	}
	var out []*structs.ServiceRegistration
	for _, r := range f.regs {
		if r.AllocID == allocID {
			out = append(out, r.Copy())
		}
	}
	return out, nil
}

func (f *fakeRegistrar) names() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []string
	for _, r := range f.regs {
		out = append(out, r.ServiceName)
	}
	slices.Sort(out)
	return out
}

// instantClock is a real clock whose waits end at once: retries and
// check intervals come back to back.
type instantClock struct{}

func (instantClock) Now() time.Time { return time.Now() }
func (instantClock) After(time.Duration) <-chan time.Time {
	ch := make(chan time.Time, 1)
	ch <- time.Now()
	return ch
}

func newServicesRunner(t *testing.T, alloc *structs.Allocation, reg ServiceRegistrar, clock Clock) *AllocRunner {
	t.Helper()
	driver := mock.New(nil)
	t.Cleanup(driver.Shutdown)
	ar, err := New(&Config{
		Alloc: alloc, AllocDirRoot: t.TempDir(), StateDB: state.NewMemDB(),
		Drivers:  func(string) (drivers.DriverPlugin, error) { return driver, nil },
		Node:     &structs.Node{ID: "node1", Datacenter: "dc1"},
		Services: reg, Clock: clock, KillGrace: 200 * time.Millisecond,
	})
	if err != nil {
		t.Fatal(err)
	}
	return ar
}

func TestServiceHookRegistersWhileTasksRun(t *testing.T) {
	nomad := func(name string) *structs.Service {
		return &structs.Service{Name: name, PortLabel: "http", Provider: structs.ServiceProviderNomad}
	}
	alloc := servicesAlloc([]*structs.Service{nomad("group-web")}, []*structs.Service{nomad("${NOMAD_TASK_NAME}-api")})
	alloc.Job.TaskGroups[0].Tasks[0].Config = map[string]any{"run_for": "1ms"} // the prestart task
	reg := newFakeRegistrar()
	reg.fail = 2 // the servers are unreachable at first: the hook retries
	ar := newServicesRunner(t, alloc, reg, instantClock{})
	go ar.Run()
	reg.wait(t, "both services registered", func() bool { return slices.Equal(reg.names(), []string{"group-web", "web-api"}) })

	stop := alloc.Copy()
	stop.DesiredStatus = structs.AllocDesiredStatusStop
	stop.AllocModifyIndex++
	ar.Update(stop)
	waitClosed(t, "run", ar.WaitCh())
	if got := reg.names(); len(got) != 0 {
		t.Errorf("after the stop, still registered: %q", got)
	}
	ar.Destroy()
}

func TestServiceHookResyncAfterAgentRestart(t *testing.T) {
	alloc := servicesAlloc(nil, []*structs.Service{{Name: "api", PortLabel: "http", Provider: structs.ServiceProviderNomad}})
	reg := newFakeRegistrar()
	ar := newServicesRunner(t, alloc, reg, instantClock{})
	desired, errs := desiredServices(serviceInputs{alloc: alloc, node: ar.services.node,
		states: map[string]*structs.TaskState{"web": {State: structs.TaskStateRunning}}})
	if len(errs) > 0 || len(desired) != 1 {
		t.Fatalf("desired = %v, %v", desired, errs)
	}
	// What an earlier agent registered: the same instance, and one of a
	// service the job no longer has.
	for _, inst := range desired {
		reg.regs[inst.reg.ID] = inst.reg.Copy()
	}
	stale := &structs.ServiceRegistration{ID: "stale", ServiceName: "old", AllocID: alloc.ID}
	reg.regs[stale.ID] = stale
	synced, err := ar.services.sync(context.Background(), nil, desired)
	if err != nil {
		t.Fatal(err)
	}
	if reg.upserts != 0 {
		t.Errorf("the unchanged instance was registered again (%d upserts)", reg.upserts)
	}
	if got := reg.names(); !slices.Equal(got, []string{"api"}) || len(synced) != 1 {
		t.Errorf("registered %q (synced %d), want only api", got, len(synced))
	}
	ar.Destroy()
}

func TestServiceHookCheckRestartsTask(t *testing.T) {
	svc := &structs.Service{Name: "api", PortLabel: "http", Provider: structs.ServiceProviderNomad, Checks: []*structs.ServiceCheck{{
		Name: "script", Type: structs.ServiceCheckScript, Command: "/bin/check", Interval: time.Second, Timeout: time.Second,
		CheckRestart: &structs.CheckRestart{Limit: 2},
	}}}
	alloc := servicesAlloc(nil, []*structs.Service{svc})
	web := alloc.Job.TaskGroups[0].Tasks[1]
	web.Config = mock.UntilStopped(map[string]any{"exec_command": map[string]any{"exit_code": 2, "stdout_string": "down"}})
	alloc.Job.TaskGroups[0].Tasks = []*structs.Task{web}
	reg := newFakeRegistrar()
	ar := newServicesRunner(t, alloc, reg, instantClock{})
	go ar.Run()
	waitChange(t, ar, "a restart by the check", func() bool {
		for _, e := range ar.AllocState().TaskStates["web"].Events {
			if e.Type == structs.TaskRestartSignal && strings.Contains(e.RestartReason, `check "script" unhealthy`) {
				return true
			}
		}
		return false
	})
	results := ar.CheckResults()
	if len(results) != 1 {
		t.Fatalf("check results = %+v", results)
	}
	for _, r := range results {
		if r.Status != structs.CheckResultFailure || r.Task != "web" || r.Service != "api" || r.Check != "script" || r.Mode != structs.CheckModeHealthiness {
			t.Errorf("result = %+v", r)
		}
	}
	ar.Destroy()
	waitClosed(t, "run", ar.WaitCh())
}

// TestServiceHookFollowsInPlaceUpdate: the scheduler updates an
// allocation in place when only its services change; the hook registers
// services the first version lacked, re-registers changed ones, and
// deregisters removed ones, without restarting the task.
func TestServiceHookFollowsInPlaceUpdate(t *testing.T) {
	alloc := servicesAlloc(nil, nil)
	alloc.Job.TaskGroups[0].Tasks[0].Config = map[string]any{"run_for": "1ms"} // the prestart task
	reg := newFakeRegistrar()
	ar := newServicesRunner(t, alloc, reg, instantClock{})
	go ar.Run()
	waitChange(t, ar, "web running", func() bool {
		s := ar.AllocState().TaskStates["web"]
		return s != nil && s.State == structs.TaskStateRunning
	})
	tags := func() []string {
		reg.mu.Lock()
		defer reg.mu.Unlock()
		var out []string
		for _, r := range reg.regs {
			out = append(out, r.ServiceName+":"+strings.Join(r.Tags, ","))
		}
		slices.Sort(out)
		return out
	}
	version := func(services []*structs.Service) {
		next := ar.Alloc().Copy()
		next.Job = next.Job.Copy()
		next.Job.TaskGroups[0].Services = services
		next.Job.Canonicalize()
		next.AllocModifyIndex++
		ar.Update(next)
	}
	svc := func(tag string) []*structs.Service {
		return []*structs.Service{{Name: "web", PortLabel: "http", Provider: structs.ServiceProviderNomad, Tags: []string{tag}}}
	}

	version(svc("v1"))
	reg.wait(t, "the added service registered", func() bool { return slices.Equal(tags(), []string{"web:v1"}) })
	version(svc("v2"))
	reg.wait(t, "the changed service registered again", func() bool { return slices.Equal(tags(), []string{"web:v2"}) })
	version(nil)
	reg.wait(t, "the removed service deregistered", func() bool { return len(tags()) == 0 })
	if n := ar.AllocState().TaskStates["web"].Restarts; n != 0 {
		t.Errorf("web restarted %d times by service updates", n)
	}
	ar.Destroy()
}
