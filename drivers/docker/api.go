package docker

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/api/types/image"
	"github.com/moby/moby/api/types/registry"
)

// This file holds the Engine API endpoints the driver calls. Request and
// response bodies are the official wire types of github.com/moby/moby/api
// (docs/decisions.md says why the types and not Docker's client); fields a
// daemon of an older API version does not know are ignored by it.

// containerCreate is the body of POST /containers/create.
type containerCreate = container.CreateRequest

// imageExists reports whether ref is in the daemon's image store.
func (c *client) imageExists(ctx context.Context, ref string) (bool, error) {
	_, err := c.inspectImage(ctx, ref)
	switch {
	case err == nil:
		return true, nil
	case isNotFound(err):
		return false, nil
	}
	return false, err
}

// inspectImage returns the image ref names.
func (c *client) inspectImage(ctx context.Context, ref string) (*image.InspectResponse, error) {
	var out image.InspectResponse
	if err := c.doJSON(ctx, http.MethodGet, "/images/"+ref+"/json", nil, nil, &out, true); err != nil {
		return nil, err
	}
	return &out, nil
}

// encodeAuth is the X-Registry-Auth header value for auth.
func encodeAuth(auth *registry.AuthConfig) (string, error) {
	b, err := json.Marshal(auth)
	if err != nil {
		return "", err
	}
	return base64.URLEncoding.EncodeToString(b), nil
}

// pullImage pulls ref with auth (nil: anonymous) and returns the progress
// stream (JSON messages), which the caller reads to its end and closes: the
// pull is done when the stream ends without an error message.
func (c *client) pullImage(ctx context.Context, ref string, auth *registry.AuthConfig) (io.ReadCloser, error) {
	name, tag := splitImageRef(ref)
	q := url.Values{"fromImage": {name}}
	if tag != "" {
		q.Set("tag", tag)
	}
	h := http.Header{}
	if auth != nil {
		enc, err := encodeAuth(auth)
		if err != nil {
			return nil, fmt.Errorf("docker: encode registry auth: %w", err)
		}
		h.Set(registry.AuthHeader, enc)
	}
	resp, err := c.doHeader(ctx, http.MethodPost, "/images/create", q, nil, h, true)
	if err != nil {
		return nil, err
	}
	return resp.Body, nil
}

// loadImage sends an image tarball (as `docker save` writes it) to the
// daemon and returns its progress stream, to read to its end and close.
func (c *client) loadImage(ctx context.Context, tarball io.Reader) (io.ReadCloser, error) {
	resp, err := c.do(ctx, http.MethodPost, "/images/load", url.Values{"quiet": {"1"}}, tarball, "application/x-tar", true)
	if err != nil {
		return nil, err
	}
	return resp.Body, nil
}

// removeImage removes the image reference ref without force: the daemon
// refuses (409) while a container uses it. A missing image is fine.
func (c *client) removeImage(ctx context.Context, ref string) error {
	err := c.doJSON(ctx, http.MethodDelete, "/images/"+ref, url.Values{"force": {"0"}}, nil, nil, true)
	if isNotFound(err) {
		return nil
	}
	return err
}

// jsonMessage is one message of a pull or load progress stream.
type jsonMessage struct {
	Status      string `json:"status"`
	Stream      string `json:"stream"`
	Error       string `json:"error"`
	ErrorDetail struct {
		Message string `json:"message"`
	} `json:"errorDetail"`
}

// err returns the error the message reports, or nil.
func (m *jsonMessage) err() error {
	if m.ErrorDetail.Message != "" {
		return errors.New(m.ErrorDetail.Message)
	}
	if m.Error != "" {
		return errors.New(m.Error)
	}
	return nil
}

// readProgress reads a progress stream to its end, calling onMessage (if
// not nil) for each message, and returns the first error it reports.
func readProgress(r io.Reader, onMessage func(*jsonMessage)) error {
	dec := json.NewDecoder(r)
	for {
		var msg jsonMessage
		if err := dec.Decode(&msg); errors.Is(err, io.EOF) {
			return nil
		} else if err != nil {
			return fmt.Errorf("docker: read progress: %w", err)
		}
		if onMessage != nil {
			onMessage(&msg)
		}
		if err := msg.err(); err != nil {
			return err
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
func (c *client) createContainer(ctx context.Context, name string, spec *containerCreate) (string, error) {
	var out container.CreateResponse
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
func (c *client) inspectContainer(ctx context.Context, id string) (*container.InspectResponse, error) {
	var out container.InspectResponse
	if err := c.doJSON(ctx, http.MethodGet, "/containers/"+id+"/json", nil, nil, &out, true); err != nil {
		return nil, err
	}
	if out.State == nil {
		out.State = &container.State{}
	}
	if out.Config == nil {
		out.Config = &container.Config{}
	}
	if out.HostConfig == nil {
		out.HostConfig = &container.HostConfig{}
	}
	return &out, nil
}

// parseDockerTime parses a time of an inspect answer; the zero time (and
// Docker's "0001-01-01T00:00:00Z") for none.
func parseDockerTime(s string) time.Time {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil || t.Year() <= 1 {
		return time.Time{}
	}
	return t
}

// waitContainer blocks until the container is not running and returns its
// exit code.
func (c *client) waitContainer(ctx context.Context, id string) (int, error) {
	var out container.WaitResponse
	q := url.Values{"condition": {"not-running"}}
	if err := c.doJSON(ctx, http.MethodPost, "/containers/"+id+"/wait", q, nil, &out, true); err != nil {
		return 0, err
	}
	if out.Error != nil && out.Error.Message != "" {
		return int(out.StatusCode), errors.New(out.Error.Message)
	}
	return int(out.StatusCode), nil
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
	in := container.ExecCreateRequest{Cmd: cmd, AttachStdout: true, AttachStderr: true}
	var out container.ExecCreateResponse
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
	var out container.ExecInspectResponse
	if err := c.doJSON(ctx, http.MethodGet, "/exec/"+execID+"/json", nil, nil, &out, true); err != nil {
		return false, 0, err
	}
	if out.ExitCode != nil {
		exitCode = *out.ExitCode
	}
	return out.Running, exitCode, nil
}

// importImage makes image repo:tag from a root filesystem tarball (as
// `docker import -`), with changes as Dockerfile instructions ("CMD
// [\"/pause\"]"), and returns the progress stream, to read to its end and
// close.
func (c *client) importImage(ctx context.Context, repo, tag string, rootfs io.Reader, changes []string) (io.ReadCloser, error) {
	q := url.Values{"fromSrc": {"-"}, "repo": {repo}, "tag": {tag}, "changes": changes}
	resp, err := c.do(ctx, http.MethodPost, "/images/create", q, rootfs, "application/x-tar", true)
	if err != nil {
		return nil, err
	}
	return resp.Body, nil
}

// listContainers returns the containers, stopped ones too, that carry
// label ("key=value" or "key").
func (c *client) listContainers(ctx context.Context, label string) ([]container.Summary, error) {
	filters, err := json.Marshal(map[string][]string{"label": {label}})
	if err != nil {
		return nil, err
	}
	var out []container.Summary
	q := url.Values{"all": {"1"}, "filters": {string(filters)}}
	if err := c.doJSON(ctx, http.MethodGet, "/containers/json", q, nil, &out, true); err != nil {
		return nil, err
	}
	return out, nil
}
