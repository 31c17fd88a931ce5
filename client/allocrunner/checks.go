package allocrunner

import (
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"reflect"

	"bytes"
	"context"
	"crypto/sha256"
	"crypto/tls"
	"encoding/hex"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/drover-io/drover/drivers/shared/taskenv"
	"github.com/drover-io/drover/plugins/drivers"
	"github.com/drover-io/drover/structs"
)

// maxCheckOutput bounds the output a check result keeps.
const maxCheckOutput = 4 << 10

// checkID is a check's stable ID: the same check of the same instance
// always gets the same one.
func checkID(regID string, ch *structs.ServiceCheck) string {
	sum := sha256.Sum256([]byte(regID + "\x00" + ch.Name + "\x00" + ch.Type))
	return hex.EncodeToString(sum[:16])
}

// checkMode is a check's mode: healthiness when it decides the
// allocation's deployment health, readiness when on_update is ignore.
func checkMode(ch *structs.ServiceCheck) string {
	if ch.OnUpdate == structs.OnUpdateIgnore {
		return structs.CheckModeReadiness
	}
	return structs.CheckModeHealthiness
}

// checkCounter turns a check's probes into its status:
// SuccessBeforePassing successes in a row make it succeed,
// FailuresBeforeCritical failures in a row make it fail (each at least
// one), and in between it keeps its status. It is pure.
type checkCounter struct {
	successBefore, failuresBefore int
	status                        string
	successes, failures           int
}

// newCheckCounter starts a counter at the check's initial status
// (pending unless initial_status says passing or critical).
func newCheckCounter(ch *structs.ServiceCheck) *checkCounter {
	c := &checkCounter{successBefore: max(ch.SuccessBeforePassing, 1), failuresBefore: max(ch.FailuresBeforeCritical, 1), status: structs.CheckResultPending}
	switch ch.InitialStatus {
	case structs.CheckStatusPassing:
		c.status = structs.CheckResultSuccess
	case structs.CheckStatusCritical:
		c.status = structs.CheckResultFailure
	}
	return c
}

// record counts one probe and returns the status.
func (c *checkCounter) record(ok bool) string {
	if ok {
		c.successes, c.failures = c.successes+1, 0
		if c.successes >= c.successBefore {
			c.status = structs.CheckResultSuccess
		}
	} else {
		c.failures, c.successes = c.failures+1, 0
		if c.failures >= c.failuresBefore {
			c.status = structs.CheckResultFailure
		}
	}
	return c.status
}

// checkRestarter decides when a failing check restarts its task: after
// Limit failing results in a row, not counting those within Grace of the
// task's start. It is pure.
type checkRestarter struct {
	limit    int
	grace    time.Duration
	failures int
}

// newCheckRestarter returns nil for a check without check_restart (or
// with limit 0: never).
func newCheckRestarter(ch *structs.ServiceCheck) *checkRestarter {
	if ch.CheckRestart == nil || ch.CheckRestart.Limit <= 0 {
		return nil
	}
	return &checkRestarter{limit: ch.CheckRestart.Limit, grace: ch.CheckRestart.Grace}
}

// observe counts a result at now for a task started at started and
// reports whether to restart the task now (the count starts again).
func (r *checkRestarter) observe(status string, now, started time.Time) bool {
	if status != structs.CheckResultFailure {
		r.failures = 0
		return false
	}
	if now.Before(started.Add(r.grace)) {
		return false
	}
	r.failures++
	if r.failures < r.limit {
		return false
	}
	r.failures = 0
	return true
}

// execer runs a command inside a task (its driver's ExecTask); script
// checks use it.
type execer func(ctx context.Context, task string, cmd []string, timeout time.Duration) (*drivers.ExecTaskResult, error)

// probeResult is the outcome of one probe.
type probeResult struct {
	ok         bool
	statusCode int
	output     string
}

// checkTarget is what a check probes: resolved from its service.
type checkTarget struct {
	check *structs.ServiceCheck
	// service is the (interpolated) name of the check's service.
	service string
	addr    string
	port    int
	task    string
	env     map[string]string
}

// same reports whether t probes what o probes, the same way: a check
// whose definition, address or port changed (an in-place update of its
// service) gets a new worker.
func (t *checkTarget) same(o *checkTarget) bool {
	return t.addr == o.addr && t.port == o.port && t.task == o.task && t.service == o.service &&
		reflect.DeepEqual(t.check, o.check)
}

// probe runs one check once, bounded by its timeout.
func probe(ctx context.Context, t *checkTarget, exec execer) probeResult {
	timeout := t.check.Timeout
	if timeout <= 0 {
		timeout = structs.MinCheckTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	switch t.check.Type {
	case structs.ServiceCheckHTTP:
		return probeHTTP(ctx, t)
	case structs.ServiceCheckTCP:
		var d net.Dialer
		conn, err := d.DialContext(ctx, "tcp", net.JoinHostPort(t.addr, strconv.Itoa(t.port)))
		if err != nil {
			return probeResult{output: err.Error()}
		}
		_ = conn.Close()
		return probeResult{ok: true, output: "nomad: tcp ok"}
	case structs.ServiceCheckGRPC:
		return probeGRPC(ctx, t)
	case structs.ServiceCheckScript:
		if exec == nil {
			return probeResult{output: "script checks need the task's driver"}
		}
		cmd := append([]string{interpolate(t.check.Command, t.env)}, interpolateAll(t.check.Args, t.env)...)
		res, err := exec(ctx, t.task, cmd, timeout)
		if err != nil {
			return probeResult{output: err.Error()}
		}
		out := string(append(res.Stdout, res.Stderr...))
		code := 0
		if res.ExitResult != nil {
			code = res.ExitResult.ExitCode
		}
		return probeResult{ok: code == 0, output: truncate(out)}
	}
	return probeResult{output: fmt.Sprintf("check type %q is not supported", t.check.Type)}
}

func probeHTTP(ctx context.Context, t *checkTarget) probeResult {
	ch := t.check
	path := interpolate(ch.Path, t.env)
	if !strings.HasPrefix(path, "/") {
		path = "/" + path
	}
	u := fmt.Sprintf("%s://%s%s", ch.Protocol, net.JoinHostPort(t.addr, strconv.Itoa(t.port)), path)
	var body io.Reader
	if ch.Body != "" {
		body = strings.NewReader(ch.Body)
	}
	req, err := http.NewRequestWithContext(ctx, ch.Method, u, body)
	if err != nil {
		return probeResult{output: err.Error()}
	}
	for k, vs := range ch.Header {
		for _, v := range vs {
			req.Header.Add(k, v)
		}
	}
	if h := req.Header.Get("Host"); h != "" {
		req.Host = h
	}
	tr := &http.Transport{DisableKeepAlives: true, TLSClientConfig: checkTLSConfig(ch)}
	defer tr.CloseIdleConnections()
	c := &http.Client{Transport: tr}
	resp, err := c.Do(req)
	if err != nil {
		return probeResult{output: err.Error()}
	}
	defer resp.Body.Close()
	var buf bytes.Buffer
	_, _ = io.Copy(&buf, io.LimitReader(resp.Body, maxCheckOutput))
	ok := resp.StatusCode >= 200 && resp.StatusCode < 300
	return probeResult{ok: ok, statusCode: resp.StatusCode, output: fmt.Sprintf("nomad: http %s %s: %s", ch.Method, resp.Status, truncate(buf.String()))}
}

// checkTLSConfig is the TLS configuration of an https or grpc check:
// tls_server_name and tls_skip_verify applied.
func checkTLSConfig(ch *structs.ServiceCheck) *tls.Config {
	return &tls.Config{
		ServerName:         ch.TLSServerName,
		InsecureSkipVerify: ch.TLSSkipVerify, //nolint:gosec // the job asked for it (tls_skip_verify)
	}
}

// probeGRPC asks the task's standard gRPC health service
// (grpc.health.v1.Health/Check) about the check's grpc_service: passing
// when it answers SERVING, critical on any other status or error.
func probeGRPC(ctx context.Context, t *checkTarget) probeResult {
	ch := t.check
	creds := insecure.NewCredentials()
	if ch.GRPCUseTLS {
		creds = credentials.NewTLS(checkTLSConfig(ch))
	}
	addr := net.JoinHostPort(t.addr, strconv.Itoa(t.port))
	conn, err := grpc.NewClient("passthrough:///"+addr, grpc.WithTransportCredentials(creds))
	if err != nil {
		return probeResult{output: fmt.Sprintf("nomad: grpc %s: %v", addr, err)}
	}
	defer conn.Close()
	service := interpolate(ch.GRPCService, t.env)
	resp, err := healthpb.NewHealthClient(conn).Check(ctx, &healthpb.HealthCheckRequest{Service: service})
	if err != nil {
		return probeResult{output: fmt.Sprintf("nomad: grpc health check of %q at %s: %v", service, addr, err)}
	}
	st := resp.GetStatus()
	return probeResult{ok: st == healthpb.HealthCheckResponse_SERVING, output: fmt.Sprintf("nomad: grpc health check of %q: %s", service, st)}
}

func interpolate(s string, env map[string]string) string {
	return taskenv.Interpolate(s, env, nil, nil)
}

func interpolateAll(ss []string, env map[string]string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = interpolate(s, env)
	}
	return out
}

func truncate(s string) string {
	if len(s) > maxCheckOutput {
		return s[:maxCheckOutput]
	}
	return s
}
