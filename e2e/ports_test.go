package e2e

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/drover-io/drover/api"
)

// Ports end to end: tasks reached on the ports the scheduler gave them,
// on loopback (dev agents and the persistent agent here report their
// loopback address), a static port asked twice blocked with the reason,
// docker's published ports, and ports held across an agent restart.

// portsRunTimeout bounds how long a job takes to run on a loaded machine.
const portsRunTimeout = 2 * time.Minute

// requireBusybox skips t without a static busybox, which serves HTTP for
// the raw_exec tasks here (.ci/docker.sh installs Debian's busybox-static).
func requireBusybox(t *testing.T) string {
	t.Helper()
	const bb = "/bin/busybox"
	if _, err := os.Stat(bb); err != nil {
		t.Skipf("no %s to serve HTTP from a task (install busybox-static, as .ci/docker.sh does): %v", bb, err)
	}
	return bb
}

// webJob is a service job id whose raw_exec task "web" serves its
// NOMAD_TASK_DIR over HTTP with busybox on ${NOMAD_ADDR_<serve>} (from its
// env block), after writing there index.html ("hello <alloc id>"), its
// environment (env.txt) and its argument ${NOMAD_HOST_PORT_<serve>}
// (arg.txt, interpolated in the driver's config). network is the group's
// network block.
func webJob(id, busybox, serve, network string) string {
	script := `echo "hello $NOMAD_ALLOC_ID" > "$NOMAD_TASK_DIR/index.html"; env > "$NOMAD_TASK_DIR/env.txt"; echo "$0" > "$NOMAD_TASK_DIR/arg.txt"; exec ` +
		busybox + ` httpd -f -p "$LISTEN" -h "$NOMAD_TASK_DIR"`
	return fmt.Sprintf(`job %q {
  group "g" {
    %s

    # A job started on a port another job just released may find it
    # still bound while that job's task stops: retry.
    restart {
      attempts = 3
      interval = "1m"
      delay    = "1s"
      mode     = "fail"
    }

    task "web" {
      driver = "raw_exec"

      config {
        command = "/bin/sh"
        args    = ["-c", %q, "${NOMAD_HOST_PORT_%s}"]
      }

      env {
        LISTEN = "${NOMAD_ADDR_%s}"
      }

      resources {
        cpu    = 20
        memory = 32
      }
    }
  }
}
`, id, network, script, serve, serve)
}

// portsRunningAlloc waits for jobID's one allocation to run and returns it
// whole.
func portsRunningAlloc(t *testing.T, c *api.Client, jobID string) *api.Allocation {
	t.Helper()
	var id string
	waitFor(t, portsRunTimeout, "the allocation of "+jobID+" to run", func() (bool, string) {
		allocs, _, err := c.Jobs().Allocations(jobID, false, nil)
		if err != nil {
			return false, err.Error()
		}
		for _, a := range allocs {
			if a.ClientStatus == api.AllocClientStatusRunning {
				id = a.ID
				return true, ""
			}
		}
		return false, fmt.Sprintf("%d allocs, none running", len(allocs))
	})
	a, _, err := c.Allocations().Info(id, nil)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// allocPort returns the host address and port of label in a.
func allocPort(t *testing.T, a *api.Allocation, label string) (string, int) {
	t.Helper()
	if a.AllocatedResources != nil {
		for _, p := range a.AllocatedResources.Shared.Ports {
			if p.Label == label {
				return p.HostIP, p.Value
			}
		}
	}
	t.Fatalf("allocation %s has no port %q: %+v", a.ID, label, a.AllocatedResources)
	return "", 0
}

// httpBody waits until url answers 200 and returns the body.
func httpBody(t *testing.T, url string) string {
	t.Helper()
	var body string
	hc := &http.Client{Timeout: 5 * time.Second}
	waitFor(t, portsRunTimeout, url+" to answer", func() (bool, string) {
		resp, err := hc.Get(url)
		if err != nil {
			return false, err.Error()
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		body = string(b)
		return resp.StatusCode == http.StatusOK, resp.Status
	})
	return body
}

// taskFile returns the contents of a file of alloc's task "web" through
// the alloc fs API.
func taskFile(t *testing.T, c *api.Client, alloc *api.Allocation, rel string) string {
	t.Helper()
	var out string
	waitFor(t, portsRunTimeout, rel+" to be written", func() (bool, string) {
		rc, err := c.AllocFS().Cat(alloc, "web/local/"+rel, nil)
		if err != nil {
			return false, err.Error()
		}
		defer rc.Close()
		b, _ := io.ReadAll(rc)
		out = string(b)
		return strings.TrimSpace(out) != "", "empty"
	})
	return out
}

// TestPortsDynamicServerAndStaticCollision: a raw_exec web server on a
// dynamic port is reached on loopback at the port its allocation was
// given, with Nomad's port variables in its environment and `alloc
// status` listing its addresses; a second job asking for the first one's
// static port is not placed, `job run` and `job plan` naming the
// collision, and runs once the first job stops.
func TestPortsDynamicServerAndStaticCollision(t *testing.T) {
	t.Parallel()
	bb := requireBusybox(t)
	a := startAgent(t)
	c := a.client(t)
	static := freePort(t)
	network := fmt.Sprintf(`network {
      port "http" {}
      port "admin" {
        static = %d
      }
    }`, static)
	first := writeFile(t, "web.nomad.hcl", webJob("web", bb, "http", network))
	if r := a.cli(t, "job", "run", first); r.code != 0 {
		t.Fatalf("job run web:\n%s", r)
	}
	alloc := portsRunningAlloc(t, c, "web")
	ip, port := allocPort(t, alloc, "http")
	if ip != "127.0.0.1" || port < 20000 || port > 32000 {
		t.Errorf("port http = %s:%d, want a port of the dynamic range on the dev agent's loopback", ip, port)
	}
	if _, admin := allocPort(t, alloc, "admin"); admin != static {
		t.Errorf("port admin = %d, want the static %d", admin, static)
	}
	if body := httpBody(t, fmt.Sprintf("http://127.0.0.1:%d/index.html", port)); strings.TrimSpace(body) != "hello "+alloc.ID {
		t.Errorf("the server answers %q, want hello %s", body, alloc.ID)
	}
	if arg := taskFile(t, c, alloc, "arg.txt"); strings.TrimSpace(arg) != strconv.Itoa(port) {
		t.Errorf("args got ${NOMAD_HOST_PORT_http} = %q, want %d", arg, port)
	}
	env := taskFile(t, c, alloc, "env.txt")
	p, s := strconv.Itoa(port), strconv.Itoa(static)
	for _, want := range []string{
		"NOMAD_PORT_http=" + p, "NOMAD_HOST_PORT_http=" + p, "NOMAD_ALLOC_PORT_http=" + p,
		"NOMAD_IP_http=127.0.0.1", "NOMAD_HOST_IP_http=127.0.0.1",
		"NOMAD_ADDR_http=127.0.0.1:" + p, "NOMAD_HOST_ADDR_http=127.0.0.1:" + p,
		"NOMAD_PORT_admin=" + s, "LISTEN=127.0.0.1:" + p,
	} {
		if !strings.Contains(env, want+"\n") {
			t.Errorf("the task's environment lacks %s:\n%s", want, env)
		}
	}
	st := a.cli(t, "alloc", "status", alloc.ID)
	for _, want := range []string{"Allocation Addresses", "*http", "127.0.0.1:" + p, "*admin", "127.0.0.1:" + s} {
		if !strings.Contains(st.stdout, want) {
			t.Errorf("alloc status lacks %q:\n%s", want, st)
		}
	}
	ns := a.cli(t, "node", "status", "-verbose", alloc.NodeID)
	for _, want := range []string{"Network Interfaces", "127.0.0.1", "default", "Dynamic Ports", "20000-32000"} {
		if !strings.Contains(ns.stdout, want) {
			t.Errorf("node status -verbose lacks %q:\n%s", want, ns)
		}
	}

	second := writeFile(t, "web2.nomad.hcl", webJob("web2", bb, "admin", network))
	wantReason := fmt.Sprintf("network: port collision admin=%d", static)
	plan := a.cli(t, "job", "plan", second)
	if !strings.Contains(plan.stdout, wantReason) {
		t.Errorf("job plan does not name the collision %q:\n%s", wantReason, plan)
	}
	r := a.cli(t, "job", "run", second)
	if r.code != 2 || !strings.Contains(r.stdout, `Dimension "`+wantReason+`" exhausted on 1 nodes`) {
		t.Fatalf("job run web2: want exit 2 naming %q\n%s", wantReason, r)
	}
	if allocs, _, err := c.Jobs().Allocations("web2", false, nil); err != nil || len(allocs) != 0 {
		t.Fatalf("web2 has allocations (%v): %+v", err, allocs)
	}

	// Once web stops, its static port is free and web2 runs on it.
	if r := a.cli(t, "job", "stop", "web"); r.code != 0 {
		t.Fatalf("job stop web:\n%s", r)
	}
	alloc2 := portsRunningAlloc(t, c, "web2")
	if _, got := allocPort(t, alloc2, "admin"); got != static {
		t.Errorf("web2 port admin = %d, want %d", got, static)
	}
	if body := httpBody(t, fmt.Sprintf("http://127.0.0.1:%d/index.html", static)); strings.TrimSpace(body) != "hello "+alloc2.ID {
		t.Errorf("web2 answers %q on its static port", body)
	}
	for _, id := range []string{"web", "web2"} {
		a.cli(t, "job", "stop", "-purge", id)
	}
}

// Bad ports are refused at submission with the field named, and nothing
// is placed.
func TestPortsBadInputRefused(t *testing.T) {
	t.Parallel()
	a := startAgent(t)
	c := a.client(t)
	cases := []struct{ name, network, config, want string }{
		{"static out of range", `network {
      port "http" {
        static = 70000
      }
    }`, `command = "/bin/true"`, `port "http": static = 70000 is out of range 1-65535`},
		{"duplicate label", `network {
      port "http" {}
      port "http" {
        static = 8080
      }
    }`, `command = "/bin/true"`, `port label "http" is declared twice`},
		{"to means nothing in host mode", `network {
      port "http" {
        to = 8080
      }
    }`, `command = "/bin/true"`, `to = 8080 means nothing in host network mode`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			job := writeFile(t, "bad.nomad.hcl", fmt.Sprintf(`job "bad" {
  group "g" {
    %s
    task "t" {
      driver = "raw_exec"
      config {
        %s
      }
    }
  }
}
`, tc.network, tc.config))
			r := a.cli(t, "job", "run", job)
			if r.code == 0 || !strings.Contains(r.stdout+r.stderr, tc.want) {
				t.Fatalf("job run: want an error naming %q\n%s", tc.want, r)
			}
			if j, _, err := c.Jobs().Info("bad", nil); err == nil && j != nil {
				t.Fatalf("the bad job was registered: %+v", j)
			}
		})
	}
	// A docker task publishing an undeclared port.
	job := writeFile(t, "undeclared.nomad.hcl", `job "bad" {
  group "g" {
    network {
      port "db" {
        to = 6379
      }
    }
    task "redis" {
      driver = "docker"
      config {
        image = "redis:7"
        ports = ["dbb"]
      }
    }
  }
}
`)
	r := a.cli(t, "job", "run", job)
	if r.code == 0 || !strings.Contains(r.stdout+r.stderr, `config ports names port "dbb", which no network block declares`) {
		t.Fatalf("job run: want an error naming the undeclared port\n%s", r)
	}
}

// dockerBridgeEndpoint returns the endpoint of a Docker daemon with a
// bridge network and the test image: DROVER_TEST_DOCKER_HOST, else the
// default daemon; it skips t (fails it under CI=true) without one.
func dockerBridgeEndpoint(t *testing.T) string {
	t.Helper()
	endpoint := os.Getenv("DROVER_TEST_DOCKER_HOST")
	if endpoint == "" {
		endpoint = "unix:///var/run/docker.sock"
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	why := ""
	if out, err := exec.CommandContext(ctx, "docker", "-H", endpoint, "image", "inspect", "--format", "{{.Id}}", dockerTestImage).CombinedOutput(); err != nil {
		why = fmt.Sprintf("no Docker daemon at %s with the image %s (run .ci/docker.sh): %v: %s", endpoint, dockerTestImage, err, strings.TrimSpace(string(out)))
	} else if out, err := exec.CommandContext(ctx, "docker", "-H", endpoint, "network", "inspect", "bridge").CombinedOutput(); err != nil {
		why = fmt.Sprintf("the Docker daemon at %s has no bridge network to publish ports on (%v: %s): start one with scripts/dockerd-bridge.sh and set DROVER_TEST_DOCKER_HOST",
			endpoint, err, strings.TrimSpace(string(out)))
	}
	if why != "" {
		if os.Getenv("CI") == "true" {
			t.Fatal(why)
		}
		t.Skip(why)
	}
	return endpoint
}

// fakeRedisImage tags, on the daemon at endpoint, an image "redis:7" made
// from the test image, that answers "+PONG" over HTTP on port 6379 (the
// tests reach no registry); it is removed when the test ends if the test
// made it.
func fakeRedisImage(t *testing.T, endpoint string) {
	t.Helper()
	docker := func(args ...string) (string, error) {
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		out, err := exec.CommandContext(ctx, "docker", append([]string{"-H", endpoint}, args...)...).CombinedOutput()
		return strings.TrimSpace(string(out)), err
	}
	if _, err := docker("image", "inspect", "redis:7"); err == nil {
		t.Log("redis:7 is already on the daemon: using it")
		return
	}
	name := fmt.Sprintf("drover-e2e-redis-%d", os.Getpid())
	if out, err := docker("run", "--name", name, "--network", "none", dockerTestImage, "sh", "-c", "mkdir -p /www && echo +PONG > /www/index.html"); err != nil {
		t.Fatalf("make the fake redis image: %v: %s", err, out)
	}
	defer docker("rm", "-f", name)
	if out, err := docker("commit", "--change", `CMD ["httpd", "-f", "-p", "6379", "-h", "/www"]`, name, "redis:7"); err != nil {
		t.Fatalf("commit the fake redis image: %v: %s", err, out)
	}
	t.Cleanup(func() { docker("image", "rm", "redis:7") })
}

// redisJob is Nomad's `job init -short` example as Nomad writes it.
const redisJob = `job "example" {
  group "cache" {
    network {
      port "db" {
        to = 6379
      }
    }

    task "redis" {
      driver = "docker"

      config {
        image          = "redis:7"
        ports          = ["db"]
        auth_soft_fail = true
      }

      identity {
        env  = true
        file = true
      }

      resources {
        cpu    = 500
        memory = 256
      }
    }
  }
}
`

// TestDockerPublishedPortNomadExample runs Nomad's `job init -short`
// example unchanged (redis in docker, its port "db" mapped to 6379) and
// reaches the container from the host on the port its allocation was
// given.
func TestDockerPublishedPortNomadExample(t *testing.T) {
	t.Parallel()
	endpoint := dockerBridgeEndpoint(t)
	fakeRedisImage(t, endpoint)
	a := startDevAgentWithConfig(t, fmt.Sprintf(`plugin "docker" {
  config {
    endpoint = %q
  }
}
`, endpoint))
	c := a.client(t)
	r := a.cli(t, "job", "run", writeFile(t, "example.nomad.hcl", redisJob))
	if r.code != 0 {
		t.Fatalf("job run:\n%s", r)
	}
	alloc := portsRunningAlloc(t, c, "example")
	ip, port := allocPort(t, alloc, "db")
	if body := httpBody(t, fmt.Sprintf("http://%s:%d/index.html", ip, port)); strings.TrimSpace(body) != "+PONG" {
		t.Errorf("the container answers %q on host port %d", body, port)
	}
	st := a.cli(t, "alloc", "status", alloc.ID)
	if want := fmt.Sprintf("%s:%d -> 6379", ip, port); !strings.Contains(st.stdout, want) {
		t.Errorf("alloc status lacks %q:\n%s", want, st)
	}
	if r := a.cli(t, "job", "stop", "-purge", "example"); r.code != 0 {
		t.Errorf("job stop:\n%s", r)
	}
	waitFor(t, portsRunTimeout, "the container to be removed", func() (bool, string) {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		out, err := exec.CommandContext(ctx, "docker", "-H", endpoint, "ps", "-aq", "--filter", "label=io.drover.alloc_id="+alloc.ID).CombinedOutput()
		return err == nil && strings.TrimSpace(string(out)) == "", string(out)
	})
}

// TestPortsHeldAcrossAgentRestart: a persistent agent restarted while a
// job holds a static and a dynamic port keeps the job running and
// reachable, and gives neither port to another job: one asking for the
// static port, and one asking for more dynamic ports than the node's
// two-port range has left, are not placed; one asking for a single
// dynamic port gets the other one.
func TestPortsHeldAcrossAgentRestart(t *testing.T) {
	t.Parallel()
	bb := requireBusybox(t)
	a := newPersistentAgent(t, "ports", roleCombined)
	lo := freePorts(t, 2)
	f, err := os.OpenFile(a.configPath, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	// Persistent agents report their default route's address; this one
	// reports loopback's, where the test reaches its tasks.
	fmt.Fprintf(f, "\nclient {\n  network_interface = %q\n  min_dynamic_port  = %d\n  max_dynamic_port  = %d\n}\n", loopbackName(t), lo, lo+1)
	f.Close()
	a.start(t)
	a.waitReady(t, portsRunTimeout)
	c := a.client(t)

	static := freePort(t)
	network := fmt.Sprintf(`network {
      port "web" {
        static = %d
      }
      port "extra" {}
    }`, static)
	if r := a.cli(t, "job", "run", writeFile(t, "held.nomad.hcl", webJob("held", bb, "web", network))); r.code != 0 {
		t.Fatalf("job run held:\n%s", r)
	}
	held := portsRunningAlloc(t, c, "held")
	_, extra := allocPort(t, held, "extra")
	if extra != lo && extra != lo+1 {
		t.Fatalf("dynamic port %d is outside the configured range %d-%d", extra, lo, lo+1)
	}
	url := fmt.Sprintf("http://127.0.0.1:%d/index.html", static)
	httpBody(t, url)

	a.interrupt(t)
	a.start(t)
	a.waitReady(t, portsRunTimeout)
	c = a.client(t)
	after := portsRunningAlloc(t, c, "held")
	if after.ID != held.ID {
		t.Fatalf("the allocation changed across the restart: %s then %s", held.ID, after.ID)
	}
	if body := httpBody(t, url); strings.TrimSpace(body) != "hello "+held.ID {
		t.Errorf("after the restart the server answers %q", body)
	}

	blocked := func(id, network, reason string) {
		t.Helper()
		job := writeFile(t, id+".nomad.hcl", webJob(id, bb, "p", network))
		r := a.cli(t, "job", "run", job)
		if r.code != 2 || !strings.Contains(r.stdout, reason) {
			t.Fatalf("job run %s: want exit 2 naming %q\n%s", id, reason, r)
		}
	}
	blocked("same-static", fmt.Sprintf(`network {
      port "p" {
        static = %d
      }
    }`, static), fmt.Sprintf("network: port collision p=%d", static))
	blocked("two-dynamic", `network {
      port "p" {}
      port "q" {}
    }`, "network: dynamic port selection failed")

	other := `network {
      port "p" {}
    }`
	job := writeFile(t, "other.nomad.hcl", strings.Replace(webJob("other", bb, "p", other), "exec "+bb, "sleep 300; exec "+bb, 1))
	if r := a.cli(t, "job", "run", "-detach", job); r.code != 0 {
		t.Fatalf("job run other:\n%s", r)
	}
	otherAlloc := portsRunningAlloc(t, c, "other")
	if _, p := allocPort(t, otherAlloc, "p"); p == extra || (p != lo && p != lo+1) {
		t.Errorf("the other job got port %d; held has %d of the range %d-%d", p, extra, lo, lo+1)
	}
	for _, id := range []string{"held", "other", "same-static", "two-dynamic"} {
		a.cli(t, "job", "stop", "-purge", id)
	}
}

// loopbackName returns the name of the host's loopback interface.
func loopbackName(t *testing.T) string {
	t.Helper()
	if _, err := os.Stat(filepath.Join("/sys/class/net", "lo")); err == nil {
		return "lo"
	}
	t.Skip("no loopback interface named lo")
	return ""
}
