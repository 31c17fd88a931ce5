package agent

import (
	"fmt"
	"slices"
	"time"

	"github.com/drover-io/drover/client/template"
	"github.com/drover-io/drover/structs"
)

// TemplateConfig is the client's template block (Nomad's keys) for every
// task's templates.
type TemplateConfig struct {
	// FunctionDenylist replaces the default denylist (plugin,
	// writeToFile) when set.
	FunctionDenylist []string
	// DisableFileSandbox lets templates read files outside their task's
	// directory.
	DisableFileSandbox bool
	// BlockQueryWait is the wait of the templates' blocking reads.
	BlockQueryWait time.Duration
	// WaitMin and WaitMax are the default wait of templates that set none;
	// WaitBoundsMin and WaitBoundsMax clamp every template's wait.
	WaitMin, WaitMax             *time.Duration
	WaitBoundsMin, WaitBoundsMax *time.Duration
	// NomadRetry is how failed reads are retried (attempts 0: forever).
	NomadRetryAttempts   int
	NomadRetryBackoff    time.Duration
	NomadRetryMaxBackoff time.Duration
}

// clientConfig returns the template package's configuration.
func (c TemplateConfig) clientConfig() *template.ClientConfig {
	out := &template.ClientConfig{
		FunctionDenylist:   slices.Clone(c.FunctionDenylist),
		DisableSandbox:     c.DisableFileSandbox,
		BlockQueryWaitTime: c.BlockQueryWait,
		NomadRetry: template.RetryConfig{
			Attempts: c.NomadRetryAttempts, Backoff: c.NomadRetryBackoff, MaxBackoff: c.NomadRetryMaxBackoff,
		},
	}
	if c.WaitMin != nil || c.WaitMax != nil {
		out.Wait = &structs.WaitConfig{Min: c.WaitMin, Max: c.WaitMax}
	}
	if c.WaitBoundsMin != nil || c.WaitBoundsMax != nil {
		out.WaitBounds = &structs.WaitConfig{Min: c.WaitBoundsMin, Max: c.WaitBoundsMax}
	}
	return out
}

// templateBlock is a file's client { template { ... } } block.
type templateBlock struct {
	FunctionDenylist     []string
	FunctionBlacklist    []string
	DisableFileSandbox   *bool
	BlockQueryWait       *time.Duration
	WaitMin, WaitMax     *time.Duration
	BoundsMin, BoundsMax *time.Duration
	RetryAttempts        *int
	RetryBackoff         *time.Duration
	RetryMaxBackoff      *time.Duration
}

func (t *templateBlock) section() section {
	const p = "client.template"
	return section{path: p, keys: map[string]keyFunc{
		"function_denylist":    strListKey(&t.FunctionDenylist, p),
		"function_blacklist":   strListKey(&t.FunctionBlacklist, p),
		"disable_file_sandbox": boolKey(&t.DisableFileSandbox, p),
		"block_query_wait":     durationKey(&t.BlockQueryWait, p),
		"wait": blockKey(func() section {
			return section{path: p + ".wait", keys: map[string]keyFunc{
				"min": durationKey(&t.WaitMin, p+".wait"),
				"max": durationKey(&t.WaitMax, p+".wait"),
			}}
		}),
		"wait_bounds": blockKey(func() section {
			return section{path: p + ".wait_bounds", keys: map[string]keyFunc{
				"min": durationKey(&t.BoundsMin, p+".wait_bounds"),
				"max": durationKey(&t.BoundsMax, p+".wait_bounds"),
			}}
		}),
		"nomad_retry": blockKey(func() section {
			r := p + ".nomad_retry"
			return section{path: r, keys: map[string]keyFunc{
				"attempts":    intKey(&t.RetryAttempts, r),
				"backoff":     durationKey(&t.RetryBackoff, r),
				"max_backoff": durationKey(&t.RetryMaxBackoff, r),
			}}
		}),
	}}
}

// merge applies what a file's template block sets.
func (c *TemplateConfig) merge(t *templateBlock) {
	if t.FunctionBlacklist != nil {
		c.FunctionDenylist = slices.Clone(t.FunctionBlacklist)
	}
	if t.FunctionDenylist != nil {
		c.FunctionDenylist = slices.Clone(t.FunctionDenylist)
	}
	setVal(&c.DisableFileSandbox, t.DisableFileSandbox)
	setVal(&c.BlockQueryWait, t.BlockQueryWait)
	if t.WaitMin != nil {
		c.WaitMin = t.WaitMin
	}
	if t.WaitMax != nil {
		c.WaitMax = t.WaitMax
	}
	if t.BoundsMin != nil {
		c.WaitBoundsMin = t.BoundsMin
	}
	if t.BoundsMax != nil {
		c.WaitBoundsMax = t.BoundsMax
	}
	setVal(&c.NomadRetryAttempts, t.RetryAttempts)
	setVal(&c.NomadRetryBackoff, t.RetryBackoff)
	setVal(&c.NomadRetryMaxBackoff, t.RetryMaxBackoff)
}

// validate checks the values that are not checked by their type.
func (c TemplateConfig) validate() error {
	for _, d := range []*time.Duration{c.WaitMin, c.WaitMax, c.WaitBoundsMin, c.WaitBoundsMax, &c.BlockQueryWait, &c.NomadRetryBackoff, &c.NomadRetryMaxBackoff} {
		if d != nil && *d < 0 {
			return fmt.Errorf("client template: durations must not be negative")
		}
	}
	if c.NomadRetryAttempts < 0 {
		return fmt.Errorf("client template: nomad_retry attempts must not be negative (0 retries forever)")
	}
	if c.WaitMin != nil && c.WaitMax != nil && *c.WaitMax < *c.WaitMin {
		return fmt.Errorf("client template: wait max (%v) is below wait min (%v)", *c.WaitMax, *c.WaitMin)
	}
	if c.WaitBoundsMin != nil && c.WaitBoundsMax != nil && *c.WaitBoundsMax < *c.WaitBoundsMin {
		return fmt.Errorf("client template: wait_bounds max (%v) is below min (%v)", *c.WaitBoundsMax, *c.WaitBoundsMin)
	}
	return nil
}
