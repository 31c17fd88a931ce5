package docker

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// This file holds the Engine API endpoints the driver calls and the parts
// of their request and response bodies it uses (documented in Docker's
// "Engine API" reference, v1.41).

// containerSpec is the body of POST /containers/create.
type containerSpec struct {
	Image      string            `json:"Image"`
	Cmd        []string          `json:"Cmd,omitempty"`
	Entrypoint []string          `json:"Entrypoint,omitempty"`
	Env        []string          `json:"Env,omitempty"`
	Labels     map[string]string `json:"Labels,omitempty"`
	WorkingDir string            `json:"WorkingDir,omitempty"`
	User       string            `json:"User,omitempty"`
	Hostname   string            `json:"Hostname,omitempty"`
	Tty        bool              `json:"Tty"`
	OpenStdin  bool              `json:"OpenStdin"`
	HostConfig hostConfig        `json:"HostConfig"`
}

// hostConfig is the HostConfig of containerSpec.
type hostConfig struct {
	Binds             []string        `json:"Binds,omitempty"`
	Mounts            []mount         `json:"Mounts,omitempty"`
	Devices           []deviceMapping `json:"Devices,omitempty"`
	NetworkMode       string          `json:"NetworkMode,omitempty"`
	Privileged        bool            `json:"Privileged"`
	Memory            int64           `json:"Memory,omitempty"`
	MemoryReservation int64           `json:"MemoryReservation,omitempty"`
	MemorySwap        int64           `json:"MemorySwap,omitempty"`
	CPUShares         int64           `json:"CpuShares,omitempty"`
	LogConfig         logConfig       `json:"LogConfig"`
}

// mount is one entry of HostConfig.Mounts.
type mount struct {
	Type         string        `json:"Type"`
	Source       string        `json:"Source,omitempty"`
	Target       string        `json:"Target"`
	ReadOnly     bool          `json:"ReadOnly,omitempty"`
	BindOptions  *bindOptions  `json:"BindOptions,omitempty"`
	TmpfsOptions *tmpfsOptions `json:"TmpfsOptions,omitempty"`
}

// bindOptions are a bind mount's options.
type bindOptions struct {
	Propagation string `json:"Propagation,omitempty"`
}

// tmpfsOptions are a tmpfs mount's options.
type tmpfsOptions struct {
	SizeBytes int64 `json:"SizeBytes,omitempty"`
	Mode      int64 `json:"Mode,omitempty"`
}

// logConfig selects the container's log driver; the driver reads logs back
// through the logs endpoint, which needs json-file (or local, journald).
type logConfig struct {
	Type   string            `json:"Type"`
	Config map[string]string `json:"Config,omitempty"`
}

// containerJSON is the part of GET /containers/{id}/json the driver (and
// its tests) use.
type containerJSON struct {
	ID    string `json:"Id"`
	Name  string `json:"Name"`
	State struct {
		Running    bool      `json:"Running"`
		OOMKilled  bool      `json:"OOMKilled"`
		StartedAt  time.Time `json:"StartedAt"`
		FinishedAt time.Time `json:"FinishedAt"`
	} `json:"State"`
	Config struct {
		Labels map[string]string `json:"Labels"`
	} `json:"Config"`
	HostConfig struct {
		Memory            int64  `json:"Memory"`
		MemoryReservation int64  `json:"MemoryReservation"`
		CPUShares         int64  `json:"CpuShares"`
		NetworkMode       string `json:"NetworkMode"`
	} `json:"HostConfig"`
}

// imageExists reports whether ref is in the daemon's image store.
func (c *client) imageExists(ctx context.Context, ref string) (bool, error) {
	err := c.doJSON(ctx, http.MethodGet, "/images/"+ref+"/json", nil, nil, nil, true)
	switch {
	case err == nil:
		return true, nil
	case isNotFound(err):
		return false, nil
	}
	return false, err
}

// pullImage pulls ref and reads the progress stream to its end, returning
// the first error the stream reports.
func (c *client) pullImage(ctx context.Context, ref string) error {
	name, tag := splitImageRef(ref)
	q := url.Values{"fromImage": {name}}
	if tag != "" {
		q.Set("tag", tag)
	}
	resp, err := c.do(ctx, http.MethodPost, "/images/create", q, nil, "", true)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	dec := json.NewDecoder(resp.Body)
	for {
		var msg struct {
			Error       string `json:"error"`
			ErrorDetail struct {
				Message string `json:"message"`
			} `json:"errorDetail"`
		}
		if err := dec.Decode(&msg); errors.Is(err, io.EOF) {
			return nil
		} else if err != nil {
			return fmt.Errorf("docker: read pull progress: %w", err)
		}
		if msg.ErrorDetail.Message != "" {
			return errors.New(msg.ErrorDetail.Message)
		}
		if msg.Error != "" {
			return errors.New(msg.Error)
		}
	}
}

// splitImageRef splits "repo:tag" into repo and tag; a digest reference
// ("repo@sha256:...") is returned whole with no tag, and a missing tag
// becomes "latest".
func splitImageRef(ref string) (name, tag string) {
	if strings.Contains(ref, "@") {
		return ref, ""
	}
	slash := strings.LastIndex(ref, "/")
	if colon := strings.LastIndex(ref, ":"); colon > slash {
		return ref[:colon], ref[colon+1:]
	}
	return ref, "latest"
}

// createContainer creates a container named name and returns its ID.
func (c *client) createContainer(ctx context.Context, name string, spec *containerSpec) (string, error) {
	var out struct {
		ID string `json:"Id"`
	}
	q := url.Values{"name": {name}}
	if err := c.doJSON(ctx, http.MethodPost, "/containers/create", q, spec, &out, true); err != nil {
		return "", err
	}
	return out.ID, nil
}

// startContainer starts a created container; one already started is fine.
func (c *client) startContainer(ctx context.Context, id string) error {
	err := c.doJSON(ctx, http.MethodPost, "/containers/"+id+"/start", nil, nil, nil, true)
	if isNotModified(err) {
		return nil
	}
	return err
}

// inspectContainer returns the container's state and configuration.
func (c *client) inspectContainer(ctx context.Context, id string) (*containerJSON, error) {
	var out containerJSON
	if err := c.doJSON(ctx, http.MethodGet, "/containers/"+id+"/json", nil, nil, &out, true); err != nil {
		return nil, err
	}
	return &out, nil
}

// waitContainer blocks until the container is not running and returns its
// exit code.
func (c *client) waitContainer(ctx context.Context, id string) (int, error) {
	var out struct {
		StatusCode int `json:"StatusCode"`
		Error      *struct {
			Message string `json:"Message"`
		} `json:"Error"`
	}
	q := url.Values{"condition": {"not-running"}}
	if err := c.doJSON(ctx, http.MethodPost, "/containers/"+id+"/wait", q, nil, &out, true); err != nil {
		return 0, err
	}
	if out.Error != nil && out.Error.Message != "" {
		return out.StatusCode, errors.New(out.Error.Message)
	}
	return out.StatusCode, nil
}

// killContainer sends signal ("SIGTERM") to the container's main process.
// A container that is not running is not an error.
func (c *client) killContainer(ctx context.Context, id, signal string) error {
	err := c.doJSON(ctx, http.MethodPost, "/containers/"+id+"/kill", url.Values{"signal": {signal}}, nil, nil, true)
	if isConflict(err) {
		return nil // not running
	}
	return err
}

// removeContainer removes the container and its anonymous volumes; force
// kills it first. A container already gone, or being removed, is fine.
func (c *client) removeContainer(ctx context.Context, id string, force bool) error {
	q := url.Values{"v": {"1"}, "force": {strconv.FormatBool(force)}}
	err := c.doJSON(ctx, http.MethodDelete, "/containers/"+id, q, nil, nil, true)
	if isNotFound(err) || (isConflict(err) && strings.Contains(err.Error(), "already in progress")) {
		return nil
	}
	return err
}

// containerLogs returns the container's multiplexed stdout and stderr
// stream from since (zero: from the start; a message logged at since
// itself is included), following new output until the container stops
// when follow is set. With timestamps each frame, one logged message,
// starts with the time the daemon logged it (RFC 3339, nanoseconds) and a
// space.
func (c *client) containerLogs(ctx context.Context, id string, since time.Time, follow, timestamps bool) (io.ReadCloser, error) {
	q := url.Values{
		"stdout":     {"1"},
		"stderr":     {"1"},
		"follow":     {strconv.FormatBool(follow)},
		"timestamps": {strconv.FormatBool(timestamps)},
	}
	if !since.IsZero() {
		q.Set("since", fmt.Sprintf("%d.%09d", since.Unix(), since.Nanosecond()))
	}
	resp, err := c.do(ctx, http.MethodGet, "/containers/"+id+"/logs", q, nil, "", true)
	if err != nil {
		return nil, err
	}
	return resp.Body, nil
}

// containerStats returns the stats stream (one JSON document a second).
func (c *client) containerStats(ctx context.Context, id string) (io.ReadCloser, error) {
	resp, err := c.do(ctx, http.MethodGet, "/containers/"+id+"/stats", url.Values{"stream": {"1"}}, nil, "", true)
	if err != nil {
		return nil, err
	}
	return resp.Body, nil
}

// createExec creates an exec instance running cmd in the container with
// its stdout and stderr attached, and returns its ID.
func (c *client) createExec(ctx context.Context, id string, cmd []string) (string, error) {
	in := map[string]any{"Cmd": cmd, "AttachStdout": true, "AttachStderr": true, "Tty": false}
	var out struct {
		ID string `json:"Id"`
	}
	if err := c.doJSON(ctx, http.MethodPost, "/containers/"+id+"/exec", nil, in, &out, true); err != nil {
		return "", err
	}
	return out.ID, nil
}

// startExec starts an exec instance and returns its multiplexed output,
// which ends when the command exits.
func (c *client) startExec(ctx context.Context, execID string) (io.ReadCloser, error) {
	body := strings.NewReader(`{"Detach":false,"Tty":false}`)
	resp, err := c.do(ctx, http.MethodPost, "/exec/"+execID+"/start", nil, body, "application/json", true)
	if err != nil {
		return nil, err
	}
	return resp.Body, nil
}

// inspectExec returns whether the exec instance still runs and its exit
// code.
func (c *client) inspectExec(ctx context.Context, execID string) (running bool, exitCode int, err error) {
	var out struct {
		Running  bool `json:"Running"`
		ExitCode *int `json:"ExitCode"`
	}
	if err := c.doJSON(ctx, http.MethodGet, "/exec/"+execID+"/json", nil, nil, &out, true); err != nil {
		return false, 0, err
	}
	if out.ExitCode != nil {
		exitCode = *out.ExitCode
	}
	return out.Running, exitCode, nil
}
