package command

import (
	"flag"
	"fmt"
	"strconv"

	"github.com/drover-io/drover/api"
)

func runOperatorSchedulerGetConfig(m *Meta, args []string) int {
	fset := m.apiFlagSet("operator scheduler get-config", "[options]", `
Show the cluster's scheduler configuration: the algorithm and, per
scheduler type, whether higher-priority jobs may preempt lower-priority
allocations.`)
	if code, done := m.parse(fset, args); done {
		return code
	}
	if fset.NArg() != 0 {
		return m.usageError(fset, "this command takes no arguments")
	}
	c := m.apiClient()
	if c == nil {
		return exitError
	}
	resp, _, err := c.Operator().SchedulerGetConfiguration(nil)
	if err != nil {
		return m.fail("querying the scheduler configuration", err)
	}
	cfg := resp.SchedulerConfig
	if cfg == nil {
		cfg = &api.SchedulerConfiguration{}
	}
	fmt.Fprint(m.stdout, formatKV([]kv{
		{"Scheduler Algorithm", cfg.SchedulerAlgorithm},
		{"Memory Oversubscription", strconv.FormatBool(cfg.MemoryOversubscriptionEnabled)},
		{"Reject Job Registration", strconv.FormatBool(cfg.RejectJobRegistration)},
		{"Pause Eval Broker", strconv.FormatBool(cfg.PauseEvalBroker)},
		{"Preemption System Scheduler", strconv.FormatBool(cfg.PreemptionConfig.SystemSchedulerEnabled)},
		{"Preemption Service Scheduler", strconv.FormatBool(cfg.PreemptionConfig.ServiceSchedulerEnabled)},
		{"Preemption Batch Scheduler", strconv.FormatBool(cfg.PreemptionConfig.BatchSchedulerEnabled)},
		{"Preemption SysBatch Scheduler", strconv.FormatBool(cfg.PreemptionConfig.SysBatchSchedulerEnabled)},
		{"Modify Index", strconv.FormatUint(cfg.ModifyIndex, 10)},
	}))
	return exitOK
}

func runOperatorSchedulerSetConfig(m *Meta, args []string) int {
	fset := m.apiFlagSet("operator scheduler set-config", "[options]", `
Change the cluster's scheduler configuration. Only the options given
change; the rest keep their current values. Boolean options take
-option=true or -option=false.`)
	algorithm := fset.String("scheduler-algorithm", "", `The scheduling algorithm: "binpack" or "spread" (drover places by binpack either way).`)
	memOversub := fset.Bool("memory-oversubscription", false, "Allow tasks to use memory beyond their reservation (memory_max); accepted and stored.")
	reject := fset.Bool("reject-job-registration", false, "Reject job registrations; accepted and stored.")
	pause := fset.Bool("pause-eval-broker", false, "Pause the evaluation broker; accepted and stored.")
	system := fset.Bool("preempt-system-scheduler", false, "Let system jobs preempt lower-priority allocations.")
	sysbatch := fset.Bool("preempt-sysbatch-scheduler", false, "Let sysbatch jobs preempt lower-priority allocations.")
	batch := fset.Bool("preempt-batch-scheduler", false, "Let batch jobs preempt lower-priority allocations.")
	service := fset.Bool("preempt-service-scheduler", false, "Let service jobs preempt lower-priority allocations.")
	checkIndex := fset.Uint64("check-index", 0, "Write only if the configuration's modify index is this one (compare-and-set).")
	if code, done := m.parse(fset, args); done {
		return code
	}
	if fset.NArg() != 0 {
		return m.usageError(fset, "this command takes no arguments")
	}
	c := m.apiClient()
	if c == nil {
		return exitError
	}
	cur, _, err := c.Operator().SchedulerGetConfiguration(nil)
	if err != nil {
		return m.fail("querying the scheduler configuration", err)
	}
	cfg := api.SchedulerConfiguration{}
	if cur.SchedulerConfig != nil {
		cfg = *cur.SchedulerConfig
	}
	cas := false
	fset.Visit(func(f *flag.Flag) {
		switch f.Name {
		case "scheduler-algorithm":
			cfg.SchedulerAlgorithm = *algorithm
		case "memory-oversubscription":
			cfg.MemoryOversubscriptionEnabled = *memOversub
		case "reject-job-registration":
			cfg.RejectJobRegistration = *reject
		case "pause-eval-broker":
			cfg.PauseEvalBroker = *pause
		case "preempt-system-scheduler":
			cfg.PreemptionConfig.SystemSchedulerEnabled = *system
		case "preempt-sysbatch-scheduler":
			cfg.PreemptionConfig.SysBatchSchedulerEnabled = *sysbatch
		case "preempt-batch-scheduler":
			cfg.PreemptionConfig.BatchSchedulerEnabled = *batch
		case "preempt-service-scheduler":
			cfg.PreemptionConfig.ServiceSchedulerEnabled = *service
		case "check-index":
			cas = true
			cfg.ModifyIndex = *checkIndex
		}
	})
	var resp *api.SchedulerSetConfigurationResponse
	if cas {
		resp, _, err = c.Operator().SchedulerCASConfiguration(&cfg, nil)
	} else {
		resp, _, err = c.Operator().SchedulerSetConfiguration(&cfg, nil)
	}
	if err != nil {
		return m.fail("updating the scheduler configuration", err)
	}
	if !resp.Updated {
		fmt.Fprintln(m.stderr, "Scheduler configuration could not be atomically updated: its modify index changed. Run get-config and try again.")
		return exitError
	}
	fmt.Fprintln(m.stdout, "Scheduler configuration updated!")
	return exitOK
}
