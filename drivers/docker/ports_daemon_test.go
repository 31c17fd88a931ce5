package docker

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/drover-io/drover/plugins/drivers"
)

// Port publishing against a real daemon. It needs a daemon with a bridge
// network: CI's (.ci/docker.sh), or, on a machine whose shared daemon runs
// with --bridge=none, one of one's own named by DROVER_TEST_DOCKER_HOST
// (scripts/dockerd-bridge.sh starts one).

// bridgeEndpoint returns the endpoint of a daemon with a bridge network,
// or skips t (fails it under CI=true, where every capability is present).
func bridgeEndpoint(t *testing.T) string {
	t.Helper()
	requireDocker(t)
	endpoint := os.Getenv("DROVER_TEST_DOCKER_HOST")
	if endpoint == "" {
		endpoint = DefaultConfig().Endpoint
	}
	has, err := hasBridge(endpoint)
	if err == nil && has {
		return endpoint
	}
	why := fmt.Sprintf("the Docker daemon at %s has no bridge network to publish ports on (err: %v): run one with scripts/dockerd-bridge.sh and set DROVER_TEST_DOCKER_HOST", endpoint, err)
	if os.Getenv("CI") == "true" {
		t.Fatal(why)
	}
	t.Skip(why)
	return ""
}

// hasBridge reports whether the daemon at endpoint has Docker's default
// bridge network.
func hasBridge(endpoint string) (bool, error) {
	c, err := newClient(endpoint, nil)
	if err != nil {
		return false, err
	}
	defer c.close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var nw struct{ Name string }
	err = c.doJSON(ctx, http.MethodGet, "/networks/bridge", nil, nil, &nw, true)
	if isNotFound(err) {
		return false, nil
	}
	return err == nil, err
}

// freeLoopbackPort returns a TCP port free on 127.0.0.1.
func freeLoopbackPort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// A container's port 80 is reached from the host on the port the
// allocation was given, and the task sees NOMAD_PORT_http = 80.
func TestDriver_PublishedPorts(t *testing.T) {
	h := newHarness(t, &Config{Endpoint: bridgeEndpoint(t)})
	conf := shell(`echo "port=$NOMAD_PORT_http" > /tmp/index.html && exec httpd -f -p "$NOMAD_PORT_http" -h /tmp`)
	conf.Ports = []string{"http"}
	cfg := h.config(conf)
	hostPort := freeLoopbackPort(t)
	cfg.Ports = []*drivers.PortMapping{{Label: "http", HostIP: "127.0.0.1", Value: hostPort, To: 80}}
	cfg.Env["NOMAD_PORT_http"] = "80"
	h.start(cfg)
	url := fmt.Sprintf("http://127.0.0.1:%d/index.html", hostPort)
	var body string
	// httpd in the container listens when it is ready; nothing tells.
	eventually(t, "the container to answer on "+url, func() bool {
		resp, err := http.Get(url)
		if err != nil {
			return false
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		body = string(b)
		return resp.StatusCode == http.StatusOK
	})
	if strings.TrimSpace(body) != "port=80" {
		t.Errorf("body = %q, want port=80", body)
	}
	info := h.inspect(cfg)
	if got := renderBindings(info.HostConfig.PortBindings); !strings.Contains(got, fmt.Sprintf("80/tcp=127.0.0.1:%d", hostPort)) {
		t.Errorf("bindings = %s", got)
	}
}

// A daemon that cannot publish (no bridge network) fails the start with
// the reason and leaves no container behind.
func TestDriver_PortsNotPublished(t *testing.T) {
	requireDocker(t)
	if has, err := hasBridge(DefaultConfig().Endpoint); err != nil || has {
		t.Skipf("the daemon publishes ports (bridge network present: %v, %v): the unpublished path is covered by TestCheckPublished", has, err)
	}
	h := newHarness(t, nil)
	conf := shell("sleep 30")
	conf.Ports = []string{"http"}
	cfg := h.config(conf)
	cfg.Ports = []*drivers.PortMapping{{Label: "http", HostIP: "127.0.0.1", Value: freeLoopbackPort(t), To: 80}}
	_, err := h.d.StartTask(context.Background(), cfg)
	if !errors.Is(err, errNotPublished) {
		t.Fatalf("StartTask err = %v, want the ports reported unpublished", err)
	}
	if _, err := h.d.InspectTask(context.Background(), cfg.ID); !errors.Is(err, drivers.ErrTaskNotFound) {
		t.Fatalf("failed start left the task behind: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if ids, err := testContainers(ctx, h.d.client); err != nil {
		t.Fatal(err)
	} else {
		for _, id := range ids {
			info, err := h.d.client.inspectContainer(ctx, id)
			if err == nil && info.Config != nil && info.Config.Labels[LabelAllocID] == cfg.AllocID {
				t.Errorf("container %s of the failed start is left", id)
			}
		}
	}
}
