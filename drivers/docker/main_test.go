package docker

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"
)

// testImage is the image the integration tests run, built locally by
// .ci/docker.sh (a static busybox imported as an image; no registry).
const testImage = "drover-test/busybox:latest"

// testAllocPrefix starts the alloc ID of every container the tests create,
// so that leftovers of this run can be found.
var testAllocPrefix = fmt.Sprintf("drover-test-%d-", os.Getpid())

// dockerSkip is why the integration tests skip: no daemon or no image.
// Set once by TestMain before any test runs.
var dockerSkip string

func TestMain(m *testing.M) {
	dockerSkip = probeDocker()
	if dockerSkip != "" {
		fmt.Fprintln(os.Stderr, "drivers/docker: integration tests skip:", dockerSkip)
	}
	code := m.Run()
	if dockerSkip == "" {
		if err := removeLeftovers(); err != nil {
			fmt.Fprintln(os.Stderr, "FAIL:", err)
			code = 1
		}
	}
	if code == 0 {
		if err := goleak.Find(); err != nil {
			fmt.Fprintln(os.Stderr, "FAIL: goroutines leaked:", err)
			code = 1
		}
	}
	os.Exit(code)
}

// probeDocker returns why the daemon or the test image is unusable, or "".
func probeDocker() string {
	c, err := newClient(DefaultConfig().Endpoint, nil)
	if err != nil {
		return err.Error()
	}
	defer c.close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := c.serverVersion(ctx); err != nil {
		return fmt.Sprintf("no reachable Docker daemon (run .ci/docker.sh): %v", err)
	}
	ok, err := c.imageExists(ctx, testImage)
	if err != nil || !ok {
		return fmt.Sprintf("test image %s missing (run .ci/docker.sh): %v", testImage, err)
	}
	return ""
}

// requireDocker skips t when the integration tests cannot run.
func requireDocker(t *testing.T) {
	t.Helper()
	if dockerSkip != "" {
		t.Skip(dockerSkip)
	}
}

// testContainers lists the containers (running or not) labelled with an
// alloc ID of this test run.
func testContainers(ctx context.Context, c *client) ([]string, error) {
	filters, _ := json.Marshal(map[string][]string{"label": {LabelAllocID}})
	var list []struct {
		ID     string            `json:"Id"`
		Labels map[string]string `json:"Labels"`
	}
	q := url.Values{"all": {"1"}, "filters": {string(filters)}}
	if err := c.doJSON(ctx, http.MethodGet, "/containers/json", q, nil, &list, true); err != nil {
		return nil, err
	}
	var ids []string
	for _, ctr := range list {
		if strings.HasPrefix(ctr.Labels[LabelAllocID], testAllocPrefix) {
			ids = append(ids, ctr.ID)
		}
	}
	return ids, nil
}

// removeLeftovers fails when the tests left containers behind, removing
// them.
func removeLeftovers() error {
	c, err := newClient(DefaultConfig().Endpoint, nil)
	if err != nil {
		return err
	}
	defer c.close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	ids, err := testContainers(ctx, c)
	if err != nil {
		return fmt.Errorf("list test containers: %w", err)
	}
	for _, id := range ids {
		_ = c.removeContainer(ctx, id, true)
	}
	if len(ids) > 0 {
		return fmt.Errorf("tests left %d containers labelled %s=%s*", len(ids), LabelAllocID, testAllocPrefix)
	}
	return nil
}
