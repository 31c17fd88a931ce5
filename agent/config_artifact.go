package agent

import (
	"fmt"
	"strings"
	"time"

	units "github.com/docker/go-units"

	"github.com/drover-io/drover/client/artifact"
)

// ArtifactConfig configures the fetching of tasks' artifacts: the
// client's artifact block, with Nomad's keys and defaults.
type ArtifactConfig struct {
	HTTPReadTimeout             time.Duration
	HTTPMaxSize                 int64 // bytes
	GitTimeout                  time.Duration
	DecompressionFileCountLimit int
	DecompressionSizeLimit      int64 // bytes
	DisableFilesystemIsolation  bool
}

// defaultArtifactConfig returns Nomad's defaults.
func defaultArtifactConfig() ArtifactConfig {
	d := artifact.DefaultConfig()
	return ArtifactConfig{
		HTTPReadTimeout:             d.HTTPReadTimeout,
		HTTPMaxSize:                 d.HTTPMaxBytes,
		GitTimeout:                  d.GitTimeout,
		DecompressionFileCountLimit: d.DecompressionFileCountLimit,
		DecompressionSizeLimit:      d.DecompressionSizeLimit,
	}
}

// getterConfig returns the configuration of the client's artifact getter.
func (c ArtifactConfig) getterConfig() *artifact.Config {
	return &artifact.Config{
		HTTPReadTimeout:             c.HTTPReadTimeout,
		HTTPMaxBytes:                c.HTTPMaxSize,
		GitTimeout:                  c.GitTimeout,
		DecompressionFileCountLimit: c.DecompressionFileCountLimit,
		DecompressionSizeLimit:      c.DecompressionSizeLimit,
		DisableFilesystemIsolation:  c.DisableFilesystemIsolation,
	}
}

// artifactBlock is a file's client { artifact { ... } } block.
type artifactBlock struct {
	HTTPReadTimeout             *time.Duration
	HTTPMaxSize                 *int64
	GitTimeout                  *time.Duration
	DecompressionFileCountLimit *int
	DecompressionSizeLimit      *int64
	DisableFilesystemIsolation  *bool
}

func (a *artifactBlock) section() section {
	const p = "client.artifact"
	return section{path: p, keys: map[string]keyFunc{
		"http_read_timeout":              durationKey(&a.HTTPReadTimeout, p),
		"http_max_size":                  sizeKey(&a.HTTPMaxSize, p),
		"git_timeout":                    durationKey(&a.GitTimeout, p),
		"decompression_file_count_limit": intKey(&a.DecompressionFileCountLimit, p),
		"decompression_size_limit":       sizeKey(&a.DecompressionSizeLimit, p),
		"disable_filesystem_isolation":   boolKey(&a.DisableFilesystemIsolation, p),
	}}
}

// merge applies what a file's artifact block sets.
func (c *ArtifactConfig) merge(a *artifactBlock) {
	setVal(&c.HTTPReadTimeout, a.HTTPReadTimeout)
	setVal(&c.HTTPMaxSize, a.HTTPMaxSize)
	setVal(&c.GitTimeout, a.GitTimeout)
	setVal(&c.DecompressionFileCountLimit, a.DecompressionFileCountLimit)
	setVal(&c.DecompressionSizeLimit, a.DecompressionSizeLimit)
	setVal(&c.DisableFilesystemIsolation, a.DisableFilesystemIsolation)
}

// validate checks the values that are not checked by their type.
func (c ArtifactConfig) validate() error {
	switch {
	case c.HTTPReadTimeout < 0, c.GitTimeout < 0:
		return fmt.Errorf("client artifact: timeouts must not be negative (0 is none)")
	case c.HTTPMaxSize < 0, c.DecompressionSizeLimit < 0, c.DecompressionFileCountLimit < 0:
		return fmt.Errorf("client artifact: sizes and limits must not be negative (0 is none)")
	}
	return nil
}

// sizeKey decodes a size such as "100GB" (decimal units) or "1GiB"
// (binary units), or a number of bytes.
func sizeKey(dst **int64, path string) keyFunc {
	return func(d *decoder, it *cfgItem) {
		if !d.unlabelled(path, it) {
			return
		}
		s, ok := d.str(dotted(path, it.key), it.val)
		if !ok {
			return
		}
		n, err := parseSize(s)
		if err != nil {
			d.errorf(it.pos, "%s = %q: %v", dotted(path, it.key), s, err)
			return
		}
		*dst = &n
	}
}

func parseSize(s string) (int64, error) {
	s = strings.TrimSpace(s)
	var (
		n   int64
		err error
	)
	if strings.Contains(strings.ToLower(s), "i") {
		n, err = units.RAMInBytes(s)
	} else {
		n, err = units.FromHumanSize(s)
	}
	if err != nil {
		return 0, fmt.Errorf("not a size: use bytes or a size such as 100MB or 1GiB")
	}
	if n < 0 {
		return 0, fmt.Errorf("a size must not be negative")
	}
	return n, nil
}
