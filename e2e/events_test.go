package e2e

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	nomad "github.com/hashicorp/nomad/api"
)

// TestEventStream subscribes with Nomad's Go client to a job's events,
// then registers the job, waits for its allocation to run and stops it:
// the stream shows the registration, the allocation running and the
// deregistration, in that order and in raft index order, and every
// payload decodes with Nomad's types.
func TestEventStream(t *testing.T) {
	t.Parallel()
	a := startAgent(t)
	c, err := nomad.NewClient(&nomad.Config{Address: a.addr})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	stream, err := c.EventStream().Stream(ctx, map[nomad.Topic][]string{
		nomad.TopicJob:        {"events"},
		nomad.TopicAllocation: {"events"}, // allocations filter by their job ID
	}, 0, nil)
	if err != nil {
		t.Fatalf("subscribe: %v", err)
	}

	job := nomad.NewServiceJob("events", "events", "global", 50)
	task := nomad.NewTask("t", "raw_exec").
		SetConfig("command", "/bin/sleep").
		SetConfig("args", []string{"300"}).
		Require(&nomad.Resources{CPU: pointer(20), MemoryMB: pointer(16)})
	job.AddTaskGroup(nomad.NewTaskGroup("g", 1).AddTask(task))
	if _, _, err := c.Jobs().Register(job, nil); err != nil {
		t.Fatalf("register: %v", err)
	}

	// What the subscriber must see, in order.
	steps := []struct {
		what  string
		match func(e *nomad.Event) (bool, error)
	}{
		{"the job's registration", func(e *nomad.Event) (bool, error) {
			if e.Topic != nomad.TopicJob || e.Type != "JobRegistered" {
				return false, nil
			}
			j, err := e.Job()
			return err == nil && j != nil && *j.ID == "events", err
		}},
		{"its allocation running", func(e *nomad.Event) (bool, error) {
			if e.Topic != nomad.TopicAllocation {
				return false, nil
			}
			al, err := e.Allocation()
			if err != nil || al == nil {
				return false, err
			}
			if al.JobID != "events" || e.Key != al.ID {
				return false, fmt.Errorf("allocation event keyed %q for allocation %s of job %q", e.Key, al.ID, al.JobID)
			}
			if al.ClientStatus == "running" {
				// Stop the job once it runs.
				if _, _, err := c.Jobs().Deregister("events", false, nil); err != nil {
					return false, fmt.Errorf("stop the job: %w", err)
				}
				return true, nil
			}
			return false, nil
		}},
		{"the job's stop", func(e *nomad.Event) (bool, error) {
			if e.Topic != nomad.TopicJob || e.Type != "JobDeregistered" {
				return false, nil
			}
			j, err := e.Job()
			return err == nil && j != nil && j.Stop != nil && *j.Stop, err
		}},
	}
	var seen []string
	var last uint64
	step := 0
	for step < len(steps) {
		var batch *nomad.Events
		select {
		case batch = <-stream:
		case <-ctx.Done():
			t.Fatalf("timed out waiting for %s; seen: %s\nagent output:\n%s", steps[step].what, strings.Join(seen, ", "), a.output)
		}
		if batch == nil {
			t.Fatalf("the stream ended waiting for %s; seen: %s", steps[step].what, strings.Join(seen, ", "))
		}
		if batch.Err != nil {
			t.Fatalf("stream: %v", batch.Err)
		}
		if batch.Index <= last {
			t.Errorf("batch index %d after %d: not in raft order", batch.Index, last)
		}
		last = batch.Index
		for i := range batch.Events {
			e := &batch.Events[i]
			seen = append(seen, fmt.Sprintf("%d %s/%s", e.Index, e.Topic, e.Type))
			if e.Index != batch.Index {
				t.Errorf("event index %d in batch %d", e.Index, batch.Index)
			}
			if e.Topic == nomad.TopicJob && e.Key != "events" {
				t.Errorf("job event for %q: the subscription asked for job events only", e.Key)
			}
			if step == len(steps) {
				continue
			}
			ok, err := steps[step].match(e)
			if err != nil {
				t.Fatalf("%s: %v", steps[step].what, err)
			}
			if ok {
				step++
			}
		}
	}
	t.Logf("events: %s", strings.Join(seen, ", "))
}

// TestEventStreamResume: index= replays what the buffer holds from that
// index; a bad topic is a 400 that lists the topics.
func TestEventStreamResume(t *testing.T) {
	t.Parallel()
	a := startAgent(t)
	c, err := nomad.NewClient(&nomad.Config{Address: a.addr})
	if err != nil {
		t.Fatal(err)
	}
	job := nomad.NewBatchJob("resume", "resume", "global", 50)
	job.AddTaskGroup(nomad.NewTaskGroup("g", 1).AddTask(nomad.NewTask("t", "raw_exec").
		SetConfig("command", "/bin/true").Require(&nomad.Resources{CPU: pointer(20), MemoryMB: pointer(16)})))
	resp, _, err := c.Jobs().Register(job, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	stream, err := c.EventStream().Stream(ctx, map[nomad.Topic][]string{nomad.TopicJob: {"resume"}}, 1, nil)
	if err != nil {
		t.Fatal(err)
	}
	select {
	case batch := <-stream:
		if batch == nil || batch.Err != nil || len(batch.Events) == 0 || batch.Events[0].Type != "JobRegistered" {
			t.Fatalf("first batch from index 1: %+v", batch)
		}
		if batch.Index != resp.JobModifyIndex {
			t.Errorf("replayed registration at index %d, the job was registered at %d", batch.Index, resp.JobModifyIndex)
		}
	case <-ctx.Done():
		t.Fatal("no replay of the registration from index 1")
	}

	hr, err := http.Get(a.addr + "/v1/event/stream?topic=Jobs")
	if err != nil {
		t.Fatal(err)
	}
	body := readAll(t, hr)
	if hr.StatusCode != http.StatusBadRequest || !strings.Contains(body, "Allocation, Evaluation") {
		t.Errorf("topic=Jobs: %d %q", hr.StatusCode, body)
	}
}

// TestEventStreamServices: topic=Service carries the registration of a
// job's Nomad service when its allocation runs and the deregistration when
// the job stops, each with the registration as payload, and nothing of
// the other topics.
func TestEventStreamServices(t *testing.T) {
	t.Parallel()
	a := startAgent(t)
	c, err := nomad.NewClient(&nomad.Config{Address: a.addr})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	stream, err := c.EventStream().Stream(ctx, map[nomad.Topic][]string{"Service": {"evsvc"}}, 0, nil)
	if err != nil {
		t.Fatalf("subscribe: %v", err)
	}
	job := nomad.NewServiceJob("evsvc", "evsvc", "global", 50)
	tg := nomad.NewTaskGroup("g", 1).AddTask(nomad.NewTask("t", "raw_exec").
		SetConfig("command", "/bin/sleep").SetConfig("args", []string{"300"}).
		Require(&nomad.Resources{CPU: pointer(20), MemoryMB: pointer(16)}))
	tg.Networks = []*nomad.NetworkResource{{DynamicPorts: []nomad.Port{{Label: "http"}}}}
	tg.Services = []*nomad.Service{{Name: "evsvc-http", PortLabel: "http", Provider: "nomad", Tags: []string{"ev"}}}
	job.AddTaskGroup(tg)
	if _, _, err := c.Jobs().Register(job, nil); err != nil {
		t.Fatalf("register: %v", err)
	}

	want := []string{"ServiceRegistration", "ServiceDeregistration"}
	var seen []string
	for len(want) > 0 {
		var batch *nomad.Events
		select {
		case batch = <-stream:
		case <-ctx.Done():
			t.Fatalf("timed out waiting for %s; seen: %s\nagent output:\n%s", want[0], strings.Join(seen, ", "), a.output)
		}
		if batch == nil || batch.Err != nil {
			t.Fatalf("stream ended waiting for %s: %+v", want[0], batch)
		}
		for _, e := range batch.Events {
			seen = append(seen, fmt.Sprintf("%d %s/%s", e.Index, e.Topic, e.Type))
			if e.Topic != "Service" {
				t.Errorf("a %s/%s event on a Service subscription", e.Topic, e.Type)
				continue
			}
			reg, ok := e.Payload["Service"].(map[string]any)
			if !ok || reg["ServiceName"] != "evsvc-http" || reg["JobID"] != "evsvc" || reg["ID"] != e.Key {
				t.Errorf("%s event keyed %q with payload %v, want the evsvc-http registration", e.Type, e.Key, e.Payload)
				continue
			}
			if len(want) > 0 && e.Type == want[0] {
				want = want[1:]
				if e.Type == "ServiceRegistration" {
					if _, _, err := c.Jobs().Deregister("evsvc", false, nil); err != nil {
						t.Fatalf("stop the job: %v", err)
					}
				}
			}
		}
	}
	t.Logf("events: %s", strings.Join(seen, ", "))
}
