package httpapi

import (
	"log/slog"
	"net/http/httptest"
	"strings"
	"testing"

	nomadapi "github.com/hashicorp/nomad/api"

	"github.com/drover-io/drover/structs"
)

// schedulersInfo is a server agent's fake: fakeInfo with workers.
type schedulersInfo struct {
	fakeInfo
	info *structs.SchedulerWorkersInfo
}

func (f schedulersInfo) SchedulerWorkers() *structs.SchedulerWorkersInfo { return f.info }

// TestAgentSchedulers: GET /v1/agent/schedulers as Nomad's API client
// reads it; an agent without a server refuses it.
func TestAgentSchedulers(t *testing.T) {
	serve := func(agent Agent) *nomadapi.Client {
		hs := New(nil, &Config{RPC: (&fakeBackend{}).handlers(), Agent: agent, ParseJob: fakeParse, Logger: slog.New(slog.DiscardHandler)})
		ts := httptest.NewServer(hs.Handler())
		t.Cleanup(ts.Close)
		c, err := nomadapi.NewClient(&nomadapi.Config{Address: ts.URL})
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	want := &structs.SchedulerWorkersInfo{ServerID: "s1", Schedulers: []structs.SchedulerWorkerInfo{{
		ID: "s1/0", EnabledSchedulers: []string{"service", "batch"}, Started: "2026-11-26T00:00:00Z",
		Status: "Started", WorkloadStatus: "WaitingToDequeue",
	}}}
	got, err := serve(schedulersInfo{info: want}).Agent().GetSchedulerWorkersInfo(nil)
	if err != nil {
		t.Fatal(err)
	}
	if got.ServerID != "s1" || len(got.Schedulers) != 1 {
		t.Fatalf("got %+v", got)
	}
	w := got.Schedulers[0]
	if w.ID != "s1/0" || w.Status != "Started" || w.WorkloadStatus != "WaitingToDequeue" ||
		strings.Join(w.EnabledSchedulers, ",") != "service,batch" || w.Started != "2026-11-26T00:00:00Z" {
		t.Errorf("worker %+v", w)
	}

	for name, agent := range map[string]Agent{"no reporter": fakeInfo{}, "client-only agent": schedulersInfo{}} {
		_, err := serve(agent).Agent().GetSchedulerWorkersInfo(nil)
		if err == nil || !strings.Contains(err.Error(), "400") || !strings.Contains(err.Error(), "runs no server") {
			t.Errorf("%s: error %v, want a 400 saying the agent runs no server", name, err)
		}
	}
}

// configurableWorkers is a server agent's fake with a worker
// configuration.
type configurableWorkers struct {
	schedulersInfo
	cfg *structs.SchedulerWorkerConfig
}

func (f configurableWorkers) SchedulerWorkerConfig() (structs.SchedulerWorkerConfig, bool) {
	return *f.cfg, true
}

func (f configurableWorkers) SetSchedulerWorkerConfig(c structs.SchedulerWorkerConfig) (structs.SchedulerWorkerConfig, error) {
	if c.NumSchedulers < 0 {
		return structs.SchedulerWorkerConfig{}, structs.Invalid("num_schedulers %d must not be negative", c.NumSchedulers)
	}
	*f.cfg = c
	return c, nil
}

// TestAgentSchedulerWorkerConfig: GET and PUT /v1/agent/schedulers/config
// as Nomad's API client calls them; a refused configuration is Nomad's
// 400 (Invalid request).
func TestAgentSchedulerWorkerConfig(t *testing.T) {
	serve := func(agent Agent) *nomadapi.Client {
		hs := New(nil, &Config{RPC: (&fakeBackend{}).handlers(), Agent: agent, ParseJob: fakeParse, Logger: slog.New(slog.DiscardHandler)})
		ts := httptest.NewServer(hs.Handler())
		t.Cleanup(ts.Close)
		c, err := nomadapi.NewClient(&nomadapi.Config{Address: ts.URL})
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	cfg := &structs.SchedulerWorkerConfig{NumSchedulers: 4, EnabledSchedulers: []string{"service", "_core"}}
	c := serve(configurableWorkers{schedulersInfo{info: &structs.SchedulerWorkersInfo{ServerID: "s1"}}, cfg}).Agent()
	got, err := c.GetSchedulerWorkerConfig(nil)
	if err != nil || got.NumSchedulers != 4 || strings.Join(got.EnabledSchedulers, ",") != "service,_core" {
		t.Fatalf("get = %+v, %v", got, err)
	}
	set, err := c.SetSchedulerWorkerConfig(nomadapi.SchedulerWorkerPoolArgs{NumSchedulers: 0, EnabledSchedulers: []string{"_core", "system"}}, nil)
	if err != nil || set.NumSchedulers != 0 || strings.Join(set.EnabledSchedulers, ",") != "_core,system" || cfg.NumSchedulers != 0 {
		t.Fatalf("set = %+v, %v; stored %+v", set, err, cfg)
	}
	_, err = c.SetSchedulerWorkerConfig(nomadapi.SchedulerWorkerPoolArgs{NumSchedulers: -1, EnabledSchedulers: []string{"_core"}}, nil)
	if err == nil || !strings.Contains(err.Error(), "400 (Invalid request)") {
		t.Fatalf("negative workers: %v, want 400 (Invalid request)", err)
	}
	if _, err := serve(fakeInfo{}).Agent().GetSchedulerWorkerConfig(nil); err == nil || !strings.Contains(err.Error(), "runs no server") {
		t.Fatalf("agent without a server: %v", err)
	}
}
