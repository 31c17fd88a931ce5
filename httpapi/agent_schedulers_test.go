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
