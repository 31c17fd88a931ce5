package api

import "strconv"

// Operator is the operator endpoint group.
type Operator struct{ c *Client }

// Operator returns the operator endpoints.
func (c *Client) Operator() *Operator { return &Operator{c: c} }

// SchedulerConfiguration is the cluster's scheduler configuration.
type SchedulerConfiguration struct {
	SchedulerAlgorithm            string
	PreemptionConfig              PreemptionConfig
	MemoryOversubscriptionEnabled bool
	RejectJobRegistration         bool
	PauseEvalBroker               bool
	// NodeLimitForFeasibilityChecks is kept and shown for compatibility
	// with Nomad's clients; drover's scheduler does not use it.
	NodeLimitForFeasibilityChecks uint `json:",omitempty"`
	CreateIndex                   uint64
	ModifyIndex                   uint64
}

// PreemptionConfig switches preemption on per scheduler type.
type PreemptionConfig struct {
	SystemSchedulerEnabled   bool
	SysBatchSchedulerEnabled bool
	BatchSchedulerEnabled    bool
	ServiceSchedulerEnabled  bool
}

// SchedulerConfigurationResponse is the body of
// `GET /v1/operator/scheduler/configuration`.
type SchedulerConfigurationResponse struct {
	SchedulerConfig *SchedulerConfiguration
	Index           uint64
}

// SchedulerSetConfigurationResponse is the answer to setting it.
type SchedulerSetConfigurationResponse struct {
	Updated bool
	Index   uint64
}

// SchedulerGetConfiguration returns the scheduler configuration.
func (o *Operator) SchedulerGetConfiguration(q *QueryOptions) (*SchedulerConfigurationResponse, *QueryMeta, error) {
	var resp SchedulerConfigurationResponse
	qm, err := o.c.query("/v1/operator/scheduler/configuration", &resp, q)
	if err != nil {
		return nil, nil, err
	}
	return &resp, qm, nil
}

// SchedulerSetConfiguration sets the scheduler configuration.
func (o *Operator) SchedulerSetConfiguration(cfg *SchedulerConfiguration, w *WriteOptions) (*SchedulerSetConfigurationResponse, *WriteMeta, error) {
	var resp SchedulerSetConfigurationResponse
	wm, err := o.c.write("PUT", "/v1/operator/scheduler/configuration", cfg, &resp, w)
	if err != nil {
		return nil, nil, err
	}
	return &resp, wm, nil
}

// SchedulerCASConfiguration sets the scheduler configuration only if its
// ModifyIndex is the stored one's; Updated says whether it was.
func (o *Operator) SchedulerCASConfiguration(cfg *SchedulerConfiguration, w *WriteOptions) (*SchedulerSetConfigurationResponse, *WriteMeta, error) {
	var resp SchedulerSetConfigurationResponse
	ep := "/v1/operator/scheduler/configuration?cas=" + strconv.FormatUint(cfg.ModifyIndex, 10)
	wm, err := o.c.write("PUT", ep, cfg, &resp, w)
	if err != nil {
		return nil, nil, err
	}
	return &resp, wm, nil
}
