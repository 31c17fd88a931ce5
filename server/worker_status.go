package server

import (
	"sync/atomic"
	"time"

	"github.com/drover-io/drover/structs"
)

// Workload states of a scheduler worker, as GET /v1/agent/schedulers
// names them.
const (
	workloadWaiting    = "WaitingToDequeue"
	workloadScheduling = "Scheduling"
	workloadStopped    = "Stopped"
)

// workerSchedulers are the scheduler types every worker runs.
var workerSchedulers = []string{
	structs.JobTypeService, structs.JobTypeBatch, structs.JobTypeSystem, "sysbatch", "_core",
}

// workerStatus is what a scheduler worker reports of itself; the worker
// sets workload, GET /v1/agent/schedulers reads it.
type workerStatus struct {
	id       string
	started  time.Time
	workload atomic.Pointer[string]
}

func newWorkerStatus(server string, n int, now time.Time) *workerStatus {
	w := &workerStatus{id: workerName(server, n), started: now}
	w.set(workloadWaiting)
	return w
}

func (w *workerStatus) set(state string) { w.workload.Store(&state) }

// SchedulerWorkers reports the server's scheduler workers and what each
// does now (GET /v1/agent/schedulers).
func (s *Server) SchedulerWorkers() *structs.SchedulerWorkersInfo {
	out := &structs.SchedulerWorkersInfo{ServerID: s.config.NodeName, Schedulers: []structs.SchedulerWorkerInfo{}}
	enabled := s.pool.config().EnabledSchedulers
	for _, w := range s.pool.statuses() {
		workload := *w.workload.Load()
		status := "Started"
		if workload == workloadStopped {
			status = "Stopped"
		}
		out.Schedulers = append(out.Schedulers, structs.SchedulerWorkerInfo{
			ID: w.id, EnabledSchedulers: enabled,
			Started: w.started.UTC().Format(time.RFC3339), Status: status, WorkloadStatus: workload,
		})
	}
	return out
}
