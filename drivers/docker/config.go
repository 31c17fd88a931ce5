package docker

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/drover-io/drover/plugins/base"
)

// Config is the docker plugin's own configuration (the agent's
// `plugin "docker" { config { ... } }` block), shared by every task. Names,
// types and defaults are those of Nomad's docker driver, and a few of
// drover's own (default_network_mode, pull_timeout, fingerprint_period).
// PluginConfigSchema declares it.
type Config struct {
	// Endpoint is the daemon's address: "unix:///var/run/docker.sock"
	// (the default, or $DOCKER_HOST when set) or "tcp://host:port".
	Endpoint string `json:"endpoint"`
	// Auth is where registry credentials come from when a task's own auth
	// block gives none.
	Auth AuthPluginConfig `json:"auth"`
	// TLS secures a tcp:// endpoint.
	TLS TLSConfig `json:"tls"`
	// GC controls the removal of containers and unused images.
	GC GCConfig `json:"gc"`
	// Volumes controls host paths in tasks' volumes and bind mounts.
	Volumes VolumesConfig `json:"volumes"`
	// AllowPrivileged lets tasks set privileged = true.
	AllowPrivileged bool `json:"allow_privileged"`
	// AllowCaps lists the capabilities tasks may hold ("all": every one);
	// nil: DefaultAllowCaps.
	AllowCaps []string `json:"allow_caps"`
	// InfraImage is the image of the infra container that holds a bridge
	// or CNI group's network namespace (network.go); the default, when it
	// cannot be pulled, is replaced by the driver's own pause image.
	InfraImage string `json:"infra_image"`
	// InfraImagePullTimeout bounds pulling InfraImage.
	InfraImagePullTimeout Duration `json:"infra_image_pull_timeout"`
	// PullActivityTimeout cancels a pull when the daemon reports no
	// progress for this long (at least one minute).
	PullActivityTimeout Duration `json:"pull_activity_timeout"`
	// PidsLimit is the process limit of every container (0: none); a
	// task's pids_limit may only lower it.
	PidsLimit int64 `json:"pids_limit"`
	// Logging is the Docker log driver of tasks that set none.
	Logging LoggingConfig `json:"logging"`
	// ExtraLabels names the optional Nomad labels to set (drover sets the
	// job, group, task and namespace ones on every container).
	ExtraLabels []string `json:"extra_labels"`

	// DefaultNetworkMode is the network_mode of tasks that set none, in
	// a group whose network block sets no mode: "default" (the daemon's
	// default network, its bridge) unless set.
	DefaultNetworkMode string `json:"default_network_mode"`
	// PullTimeout is the image_pull_timeout of tasks that set none.
	PullTimeout Duration `json:"pull_timeout"`
	// FingerprintPeriod is how often the daemon's health is re-checked.
	FingerprintPeriod Duration `json:"fingerprint_period"`
}

// AuthPluginConfig is the plugin's auth block.
type AuthPluginConfig struct {
	// Config is a Docker config.json: its auths, credHelpers and
	// credsStore are used, in that order.
	Config string `json:"config"`
	// Helper is a credential helper: the program docker-credential-<helper>
	// on the agent's PATH.
	Helper string `json:"helper"`
}

// UnmarshalJSON accepts an object or a list of objects (a block).
func (a *AuthPluginConfig) UnmarshalJSON(b []byte) error {
	type plain AuthPluginConfig
	return decodeBlock(b, (*plain)(a))
}

// TLSConfig is the plugin's tls block: PEM files.
type TLSConfig struct {
	// Cert and Key are the client's certificate and key.
	Cert string `json:"cert"`
	Key  string `json:"key"`
	// CA verifies the daemon's certificate.
	CA string `json:"ca"`
}

// UnmarshalJSON accepts an object or a list of objects (a block).
func (t *TLSConfig) UnmarshalJSON(b []byte) error {
	type plain TLSConfig
	return decodeBlock(b, (*plain)(t))
}

func (t TLSConfig) set() bool { return t.Cert != "" || t.Key != "" || t.CA != "" }

// GCConfig is the plugin's gc block.
type GCConfig struct {
	// Image removes an image the driver pulled or loaded once no task
	// uses it for ImageDelay (default true).
	Image *bool `json:"image"`
	// ImageDelay is how long an unused image is kept ("3m").
	ImageDelay Duration `json:"image_delay"`
	// Container removes a task's container when the task is destroyed
	// (default true).
	Container *bool `json:"container"`
	// DanglingContainers is Nomad's reaper of untracked containers; drover
	// accepts it only disabled.
	DanglingContainers DanglingContainersConfig `json:"dangling_containers"`
}

// UnmarshalJSON accepts an object or a list of objects (a block).
func (g *GCConfig) UnmarshalJSON(b []byte) error {
	type plain GCConfig
	return decodeBlock(b, (*plain)(g))
}

// DanglingContainersConfig is gc's dangling_containers block.
type DanglingContainersConfig struct {
	Enabled       *bool    `json:"enabled"`
	DryRun        bool     `json:"dry_run"`
	Period        Duration `json:"period"`
	CreationGrace Duration `json:"creation_grace"`
}

// UnmarshalJSON accepts an object or a list of objects (a block).
func (d *DanglingContainersConfig) UnmarshalJSON(b []byte) error {
	type plain DanglingContainersConfig
	return decodeBlock(b, (*plain)(d))
}

// VolumesConfig is the plugin's volumes block.
type VolumesConfig struct {
	// Enabled allows host paths outside the allocation directory in
	// volumes and bind mounts; when false (the default, as Nomad's) only
	// paths inside the allocation directory are allowed.
	Enabled *bool `json:"enabled"`
	// SELinuxLabel ("z" or "Z") is added to the binds of the task's
	// directories and of its volumes.
	SELinuxLabel string `json:"selinuxlabel"`
}

// UnmarshalJSON accepts an object or, as the job file parser writes a
// block, a list of one object.
func (v *VolumesConfig) UnmarshalJSON(b []byte) error {
	type plain VolumesConfig
	return decodeBlock(b, (*plain)(v))
}

// LoggingConfig is a logging block: a Docker log driver and its options.
type LoggingConfig struct {
	Type string `json:"type"`
	// Driver is the pre-0.9 name of Type, accepted in task configs.
	Driver string    `json:"driver"`
	Config StringMap `json:"config"`
}

// UnmarshalJSON accepts an object or a list of objects (a block).
func (l *LoggingConfig) UnmarshalJSON(b []byte) error {
	type plain LoggingConfig
	return decodeBlock(b, (*plain)(l))
}

// volumesEnabled reports whether host paths outside the allocation are
// allowed.
func (c *Config) volumesEnabled() bool {
	return c.Volumes.Enabled != nil && *c.Volumes.Enabled
}

func (c *Config) gcImage() bool     { return c.GC.Image == nil || *c.GC.Image }
func (c *Config) gcContainer() bool { return c.GC.Container == nil || *c.GC.Container }

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

// Defaults of Config (Nomad's, where Nomad has the option).
const (
	defaultNetworkMode         = "default"
	defaultPullTimeout         = 5 * time.Minute
	defaultFingerprintPeriod   = 30 * time.Second
	defaultImageDelay          = 3 * time.Minute
	defaultPullActivityTimeout = 2 * time.Minute
	// minPullActivityTimeout is the least pull_activity_timeout; smaller
	// values are raised to it, as Nomad does.
	minPullActivityTimeout = time.Minute
	defaultLogDriver       = "json-file"
)

// DefaultAllowCaps is allow_caps when the plugin config sets none: Docker's
// default capabilities without NET_RAW, as Nomad's.
var DefaultAllowCaps = []string{"audit_write", "chown", "dac_override", "fowner", "fsetid", "kill", "mknod",
	"net_bind_service", "setfcap", "setgid", "setpcap", "setuid", "sys_chroot"}

// defaultLogConfig is the log driver options when neither the task nor the
// plugin config sets them: json-file with two files of 2 MB, as Nomad's.
func defaultLogConfig() map[string]string {
	return map[string]string{"max-file": "2", "max-size": "2m"}
}

// defaultInfraImage is Nomad's default infra_image for this architecture.
func defaultInfraImage() string {
	return "registry.k8s.io/pause-" + runtime.GOARCH + ":3.3"
}

// DefaultConfig returns the plugin configuration used when none is given.
func DefaultConfig() *Config {
	c := &Config{}
	c.setDefaults()
	return c
}

// ParseConfig checks the plugin's config block (JSON; nil or empty: none)
// against PluginConfigSchema and returns it with defaults filled in. Every
// problem is reported, each as a *base.ConfigError naming the field.
func ParseConfig(raw []byte) (*Config, error) {
	validated, err := PluginConfigSchema().Validate(Name, raw)
	if err != nil {
		return nil, err
	}
	c := &Config{}
	if err := decodeBlock(validated, c); err != nil {
		return nil, &base.ConfigError{Plugin: Name, Err: err}
	}
	c.setDefaults()
	if err := c.check(); err != nil {
		return nil, err
	}
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
	if c.InfraImagePullTimeout <= 0 {
		c.InfraImagePullTimeout = Duration(defaultPullTimeout)
	}
	if c.FingerprintPeriod <= 0 {
		c.FingerprintPeriod = Duration(defaultFingerprintPeriod)
	}
	if c.GC.ImageDelay <= 0 {
		c.GC.ImageDelay = Duration(defaultImageDelay)
	}
	if c.PullActivityTimeout <= 0 {
		c.PullActivityTimeout = Duration(defaultPullActivityTimeout)
	}
	if c.AllowCaps == nil {
		c.AllowCaps = DefaultAllowCaps
	}
	if c.InfraImage == "" {
		c.InfraImage = defaultInfraImage()
	}
	if c.Logging.Type == "" {
		c.Logging.Type = c.Logging.Driver
	}
	if c.Logging.Type == "" {
		c.Logging.Type = defaultLogDriver
		if c.Logging.Config == nil {
			c.Logging.Config = defaultLogConfig()
		}
	}
}

// extraLabelNames are the values extra_labels may match (globs allowed).
var extraLabelNames = []string{"job_name", "job_id", "task_group_name", "task_name", "namespace", "node_name", "node_id"}

// check validates what the schema cannot: values and combinations.
func (c *Config) check() error {
	var errs []error
	fieldErr := func(field, format string, args ...any) {
		errs = append(errs, &base.ConfigError{Plugin: Name, Field: field, Err: fmt.Errorf(format, args...)})
	}
	if _, err := parseCaps(c.AllowCaps); err != nil {
		fieldErr("allow_caps", "%v", err)
	}
	if (c.TLS.Cert == "") != (c.TLS.Key == "") {
		fieldErr("tls", "cert and key go together: set both or neither")
	}
	if c.Auth.Helper != "" && strings.ContainsRune(c.Auth.Helper, filepath.Separator) {
		fieldErr("auth.helper", "%q: give the helper's name (docker-credential-<name> on PATH), not a path", c.Auth.Helper)
	}
	if d := c.GC.DanglingContainers.Enabled; d != nil && *d {
		fieldErr("gc.dangling_containers.enabled", "the dangling container reaper is not supported by drover; set enabled = false or remove the block (a leftover container of a task is removed when the task starts again)")
	}
	for _, l := range c.ExtraLabels {
		ok := false
		for _, n := range extraLabelNames {
			if m, err := filepath.Match(l, n); err == nil && m {
				ok = true
			}
		}
		if !ok {
			fieldErr("extra_labels", "%q matches none of %s", l, strings.Join(extraLabelNames, ", "))
		}
	}
	if c.PidsLimit < 0 {
		fieldErr("pids_limit", "must not be negative")
	}
	return errors.Join(errs...)
}

// pullActivityTimeout is PullActivityTimeout, at least the minimum.
func (c *Config) pullActivityTimeout() time.Duration {
	return max(time.Duration(c.PullActivityTimeout), minPullActivityTimeout)
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
