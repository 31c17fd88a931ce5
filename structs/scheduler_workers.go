package structs

// SchedulerWorkersInfo is the body of GET /v1/agent/schedulers: a server's
// scheduler workers, in Nomad's shape (snake_case keys, as Nomad's).
type SchedulerWorkersInfo struct {
	// ServerID names the server the workers run in.
	ServerID string `json:"server_id"`
	// Schedulers are its workers, in the order they were started.
	Schedulers []SchedulerWorkerInfo `json:"schedulers"`
}

// SchedulerWorkerInfo is one scheduler worker of a server.
type SchedulerWorkerInfo struct {
	// ID is the worker's name, SERVER/N.
	ID string `json:"id"`
	// EnabledSchedulers are the scheduler types the worker runs
	// evaluations of (every type: drover does not split them).
	EnabledSchedulers []string `json:"enabled_schedulers"`
	// Started is when the worker started (RFC 3339).
	Started string `json:"started"`
	// Status is the worker's life cycle: Started or Stopped.
	Status string `json:"status"`
	// WorkloadStatus is what the worker does now: WaitingToDequeue,
	// Scheduling, or Stopped.
	WorkloadStatus string `json:"workload_status"`
}

// SchedulerWorkerConfig is the number of a server's scheduler workers and
// the scheduler types they run (GET|PUT /v1/agent/schedulers/config; JSON
// keys as Nomad's).
type SchedulerWorkerConfig struct {
	NumSchedulers     int      `json:"num_schedulers"`
	EnabledSchedulers []string `json:"enabled_schedulers"`
}
