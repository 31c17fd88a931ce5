package docker

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"time"
)

// Config is the docker plugin's own configuration (the agent's
// `plugin "docker" { config { ... } }` block), shared by every task.
type Config struct {
	// Endpoint is the daemon's address: "unix:///var/run/docker.sock"
	// (the default, or $DOCKER_HOST when set) or "tcp://host:port".
	Endpoint string `json:"endpoint"`
	// AllowPrivileged lets tasks set privileged = true.
	AllowPrivileged bool `json:"allow_privileged"`
	// Volumes controls host paths in tasks' volumes and bind mounts.
	Volumes VolumesConfig `json:"volumes"`
	// DefaultNetworkMode is the network_mode of tasks that set none:
	// "none" by default, as a daemon started with --bridge=none has no
	// bridge network; set "bridge" where the daemon has one.
	DefaultNetworkMode string `json:"default_network_mode"`
	// PullTimeout bounds pulling a missing image ("5m" by default).
	PullTimeout Duration `json:"pull_timeout"`
	// FingerprintPeriod is how often the daemon's health is re-checked
	// (30s by default).
	FingerprintPeriod Duration `json:"fingerprint_period"`
}

// VolumesConfig is the plugin's volumes block.
type VolumesConfig struct {
	// Enabled allows host paths outside the allocation directory in
	// volumes and bind mounts; when false (the default, as Nomad's) only
	// paths inside the allocation directory are allowed.
	Enabled *bool `json:"enabled"`
}

// UnmarshalJSON accepts an object or, as the job file parser writes a
// block, a list of one object.
func (v *VolumesConfig) UnmarshalJSON(b []byte) error {
	type plain VolumesConfig
	return decodeBlock(b, (*plain)(v))
}

// volumesEnabled reports whether host paths outside the allocation are
// allowed.
func (c *Config) volumesEnabled() bool {
	return c.Volumes.Enabled != nil && *c.Volumes.Enabled
}

// Duration is a time.Duration written as a Go duration string ("30s").
type Duration time.Duration

// UnmarshalJSON parses "30s"-style strings and numbers of nanoseconds.
func (d *Duration) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		var n int64
		if err := json.Unmarshal(b, &n); err != nil {
			return fmt.Errorf("duration: want a string such as \"30s\": %s", b)
		}
		*d = Duration(n)
		return nil
	}
	v, err := time.ParseDuration(s)
	if err != nil {
		return fmt.Errorf("duration %q: %w", s, err)
	}
	*d = Duration(v)
	return nil
}

// MarshalJSON writes the duration as a string.
func (d Duration) MarshalJSON() ([]byte, error) {
	return json.Marshal(time.Duration(d).String())
}

// Defaults of Config.
const (
	defaultNetworkMode       = "none"
	defaultPullTimeout       = 5 * time.Minute
	defaultFingerprintPeriod = 30 * time.Second
)

// DefaultConfig returns the plugin configuration used when none is given.
func DefaultConfig() *Config {
	c := &Config{}
	c.setDefaults()
	return c
}

// ParseConfig decodes the plugin's config block (JSON), rejecting unknown
// fields, and fills in defaults. Empty input gives DefaultConfig.
func ParseConfig(raw []byte) (*Config, error) {
	c := &Config{}
	if len(bytes.TrimSpace(raw)) > 0 {
		if err := decodeBlock(raw, c); err != nil {
			return nil, fmt.Errorf("docker plugin config: %w", err)
		}
	}
	c.setDefaults()
	return c, nil
}

func (c *Config) setDefaults() {
	if c.Endpoint == "" {
		c.Endpoint = os.Getenv("DOCKER_HOST")
	}
	if c.Endpoint == "" {
		c.Endpoint = DefaultEndpoint
	}
	if c.DefaultNetworkMode == "" {
		c.DefaultNetworkMode = defaultNetworkMode
	}
	if c.PullTimeout <= 0 {
		c.PullTimeout = Duration(defaultPullTimeout)
	}
	if c.FingerprintPeriod <= 0 {
		c.FingerprintPeriod = Duration(defaultFingerprintPeriod)
	}
}

// decodeBlock strictly decodes an object, or a list of objects (a block
// written once or more by the job file parser; later ones win field by
// field), into out.
func decodeBlock(b []byte, out any) error {
	b = bytes.TrimSpace(b)
	if len(b) > 0 && b[0] == '[' {
		var list []json.RawMessage
		if err := json.Unmarshal(b, &list); err != nil {
			return err
		}
		for _, item := range list {
			if err := decodeStrict(item, out); err != nil {
				return err
			}
		}
		return nil
	}
	return decodeStrict(b, out)
}

func decodeStrict(b []byte, out any) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(out); err != nil {
		return err
	}
	if dec.More() {
		return errors.New("unexpected data after the value")
	}
	return nil
}
