package base

import (
	"encoding/json"
	"fmt"
)

// TaskConfigSchemas maps driver names to the schemas of their tasks'
// config blocks: what a job's tasks are checked against when the job is
// submitted (job validate, job plan, job run), before any client tries to
// start them. The agent builds one from its catalog of built-in drivers.
type TaskConfigSchemas map[string]*Schema

// ValidateTaskConfig checks a task's config block, as the submitted job
// holds it, against its driver's schema (Schema.ValidateSubmitted). known
// is false for a driver s does not have (a plugin found on the clients):
// its tasks' config blocks are checked by the driver when they start. The
// error joins one *ConfigError per problem, each naming the field.
func (s TaskConfigSchemas) ValidateTaskConfig(driver string, config map[string]any) (known bool, err error) {
	schema, ok := s[driver]
	if !ok {
		return false, nil
	}
	raw, err := json.Marshal(config)
	if err != nil {
		return true, &ConfigError{Plugin: driver, Err: fmt.Errorf("not valid JSON: %w", err)}
	}
	return true, schema.ValidateSubmitted(driver, raw)
}
