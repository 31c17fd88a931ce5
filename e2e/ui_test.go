package e2e

import (
	"bytes"
	"context"
	"fmt"
	"image/png"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"github.com/drover-io/drover/api"
)

// The web UI in a real headless browser: Debian's chromium (installed by
// .ci/chromium.sh) driven with chromedp. Each page must load without a
// console error, an uncaught exception or a failed request, and show what
// the test created. DROVER_UI_SCREENSHOTS=<dir> also saves the main pages
// as PNGs (docs/ui-*.png are made so: see docs/ui.md).

// uiJob prints a greeting, then a numbered tick every second, so that the
// test sees the log both as it was and as it grows.
const uiJob = `job "ui-web" {
  group "frontend" {
    network {
      port "http" {}
    }

    service {
      name     = "ui-web-http"
      provider = "nomad"
      port     = "http"
      tags     = ["ui", "frontend"]
    }

    task "server" {
      driver = "raw_exec"
      config {
        command = "/bin/sh"
        args    = ["-c", "echo ui-hello-from-the-task; i=0; while true; do i=$((i+1)); echo tick $i; echo warn $i >&2; sleep 1; done"]
      }
      resources {
        cpu    = 50
        memory = 32
      }
    }
  }
}
`

// uiTooBigJob asks for more memory than any node has.
const uiTooBigJob = `job "ui-toobig" {
  group "huge" {
    task "t" {
      driver = "raw_exec"
      config {
        command = "/bin/true"
      }
      resources {
        memory = 10000000
      }
    }
  }
}
`

// notAvailableOnThisAgent are the endpoints the UI asks for to learn
// whether the agent has a feature; their 404 is an answer, not a failure.
var notAvailableOnThisAgent = []string{"/v1/vars", "/v1/services", "/v1/agent/members", "/v1/acl/token/self"}

// findChromium returns the browser to drive: $DROVER_CHROMIUM or the first
// of Debian's and other distributions' names on PATH.
func findChromium(t *testing.T) string {
	t.Helper()
	if p := os.Getenv("DROVER_CHROMIUM"); p != "" {
		return p
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("CI") == "true" {
		t.Fatal("CI needs a Chromium to test the web UI: .ci/chromium.sh installs Debian's chromium")
	}
	t.Skip("no chromium on PATH (install it with .ci/chromium.sh or apt-get install chromium, or set DROVER_CHROMIUM): the web UI is not tested in a browser")
	return ""
}

// browser is one headless Chromium tab on the agent, with what went wrong
// in it so far.
type browser struct {
	ctx  context.Context
	base string

	mu       sync.Mutex                       // guards the fields below
	problems []string                         // console errors, exceptions, failed requests
	tokens   []string                         // X-Nomad-Token of each /v1 request, "" when none
	inflight map[network.RequestID]apiRequest // /v1 requests not yet finished
	document cdp.LoaderID                     // the loader of the document on screen
	// order lists, as they happened, each end of a /v1 request ("end
	// <id>") and each document's response ("document <url>").
	order []string
}

func newBrowser(t *testing.T, chrome, base string) *browser {
	t.Helper()
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(chrome),
		chromedp.Headless,
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck,
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.Flag("disable-extensions", true),
		chromedp.Flag("disable-default-apps", true),
		chromedp.Flag("lang", "en-US"),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1280, 800),
	}
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelTab := chromedp.NewContext(actx, chromedp.WithLogf(t.Logf))
	t.Cleanup(func() {
		cancelTab()
		cancelAlloc()
	})
	b := &browser{ctx: ctx, base: base, inflight: map[network.RequestID]apiRequest{}}
	// Start the browser with no deadline: one on the first action would
	// bind the browser's life to it.
	if err := chromedp.Do(ctx); err != nil {
		t.Fatalf("start %s: %v", chrome, err)
	}
	if err := chromedp.Listen(ctx, b.record); err != nil {
		t.Fatalf("listen to the tab: %v", err)
	}
	return b
}

// apiRequest is a /v1 request of a document.
type apiRequest struct {
	url    string
	loader cdp.LoaderID
}

// record runs in the tab's event loop: it notes what went wrong, fast.
func (b *browser) record(ev any) {
	b.mu.Lock()
	defer b.mu.Unlock()
	switch e := ev.(type) {
	case *runtime.EventConsoleAPICalled:
		if e.Type == runtime.ConsoleAPICalledTypeError || e.Type == runtime.ConsoleAPICalledTypeAssert {
			var args []string
			for _, a := range e.Args {
				args = append(args, strings.Trim(string(a.Value), `"`)+a.Description)
			}
			b.problems = append(b.problems, fmt.Sprintf("console.%s: %s", e.Type, strings.Join(args, " ")))
		}
	case *runtime.EventExceptionThrown:
		d := e.ExceptionDetails
		desc := d.Text
		if d.Exception != nil {
			desc += " " + d.Exception.Description
		}
		b.problems = append(b.problems, fmt.Sprintf("exception at %s:%d: %s", d.URL, d.LineNumber+1, desc))
	case *log.EventEntryAdded:
		if e.Entry.Level == log.EntryLevelError && !b.expected(e.Entry.URL) {
			b.problems = append(b.problems, fmt.Sprintf("browser log (%s): %s %s", e.Entry.Source, e.Entry.Text, e.Entry.URL))
		}
	case *network.EventResponseReceived:
		if e.Type == network.ResourceTypeDocument {
			b.order = append(b.order, "document "+e.Response.URL)
			b.document = e.LoaderID
		}
		if e.Response.Status >= 400 && !b.expected(e.Response.URL) {
			b.problems = append(b.problems, fmt.Sprintf("HTTP %d for %s", e.Response.Status, e.Response.URL))
		}
	case *network.EventLoadingFinished:
		if _, ok := b.inflight[e.RequestID]; ok {
			b.order = append(b.order, "end "+string(e.RequestID))
		}
		delete(b.inflight, e.RequestID)
	case *network.EventLoadingFailed:
		if _, ok := b.inflight[e.RequestID]; ok {
			b.order = append(b.order, "end "+string(e.RequestID))
		}
		delete(b.inflight, e.RequestID)
		// A request the page aborted (it left the page, or a log stream
		// was switched) is cancelled, not failed.
		if !e.Canceled {
			b.problems = append(b.problems, fmt.Sprintf("request %s failed: %s %s", e.RequestID, e.ErrorText, e.BlockedReason))
		}
	case *network.EventRequestWillBeSent:
		if u, err := url.Parse(e.Request.URL); err == nil && strings.HasPrefix(u.Path, "/v1/") {
			tok := ""
			for k, v := range e.Request.Headers {
				if strings.EqualFold(k, "X-Nomad-Token") {
					tok = fmt.Sprint(v)
				}
			}
			b.tokens = append(b.tokens, tok)
			b.inflight[e.RequestID] = apiRequest{url: e.Request.URL, loader: e.LoaderID}
		}
	}
}

// expected reports whether a failed request is one the UI makes to learn
// that the agent lacks a feature.
func (b *browser) expected(raw string) bool {
	u, err := url.Parse(raw)
	if err != nil {
		return false
	}
	for _, p := range notAvailableOnThisAgent {
		if u.Path == p {
			return true
		}
	}
	return false
}

// checkClean fails the test with what went wrong on the page so far.
func (b *browser) checkClean(t *testing.T, page string) {
	t.Helper()
	b.mu.Lock()
	problems := b.problems
	b.problems = nil
	b.mu.Unlock()
	for _, p := range problems {
		t.Errorf("%s: %s", page, p)
	}
}

// do runs actions with a bound that a loaded 2-core machine meets.
func (b *browser) do(t *testing.T, what string, actions ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 90*time.Second)
	defer cancel()
	if err := chromedp.Do(ctx, actions...); err != nil {
		t.Fatalf("%s: %v", what, err)
	}

}

// text returns the visible text of the element sel selects, read in one
// step: the pages replace their sections as data arrives, so a node found
// by one call may be gone by the next.
func (b *browser) text(t *testing.T, sel string) string {
	t.Helper()
	b.waitJS(t, sel+" to exist", fmt.Sprintf("!!document.querySelector(%q)", sel))
	ctx, cancel := context.WithTimeout(b.ctx, 90*time.Second)
	defer cancel()
	s, err := chromedp.Run(ctx, chromedp.Evaluate[string](fmt.Sprintf(
		"(() => { const el = document.querySelector(%q); return el ? el.innerText : ''; })()", sel)))
	if err != nil {
		t.Fatalf("text of %s: %v", sel, err)
	}
	return s
}

// click clicks the element sel selects, found and clicked in one step (the
// pages replace their sections as data arrives).
func (b *browser) click(t *testing.T, sel string) {
	t.Helper()
	b.waitJS(t, sel+" to exist", fmt.Sprintf("!!document.querySelector(%q)", sel))
	b.do(t, "click "+sel, chromedp.Evaluate[chromedp.Void](fmt.Sprintf("document.querySelector(%q).click()", sel)))
}

// waitJS waits, on each change of the page, until the JavaScript
// expression is true.
func (b *browser) waitJS(t *testing.T, what, expr string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 95*time.Second)
	defer cancel()
	_, err := chromedp.Run(ctx, chromedp.Poll[chromedp.Void](expr,
		chromedp.WithPollingMutation(), chromedp.WithPollingTimeout(90*time.Second)))
	if err != nil {
		t.Fatalf("waiting for %s: %v", what, err)
	}

}

// textHas is a JavaScript expression: the element sel holds every one of
// the strings.
func textHas(sel string, want ...string) string {
	var conds []string
	for _, w := range want {
		conds = append(conds, fmt.Sprintf("el.textContent.includes(%q)", w))
	}
	return fmt.Sprintf("(() => { const el = document.querySelector(%q); return !!el && %s; })()", sel, strings.Join(conds, " && "))
}

// screenshot saves the page as dir/ui-name.png when DROVER_UI_SCREENSHOTS
// names a directory.
func (b *browser) screenshot(t *testing.T, name string) {
	t.Helper()
	dir := os.Getenv("DROVER_UI_SCREENSHOTS")
	if dir == "" {
		return
	}
	// Relative times and the footer's heartbeat differ from run to run;
	// everything else on the page is what the test made.
	ctx, cancel := context.WithTimeout(b.ctx, 90*time.Second)
	defer cancel()
	buf, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatalf("screenshot %s: %v", name, err)
	}
	// Chromium's PNGs are fast to write, not small: encode again with the
	// best compression.
	img, err := png.Decode(bytes.NewReader(buf))
	if err != nil {
		t.Fatalf("screenshot %s: %v", name, err)
	}
	var out bytes.Buffer
	if err := (&png.Encoder{CompressionLevel: png.BestCompression}).Encode(&out, img); err != nil {
		t.Fatalf("screenshot %s: %v", name, err)
	}
	if err := os.WriteFile(filepath.Join(dir, "ui-"+name+".png"), out.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// visit opens path in the tab and waits until sel is visible.
func (b *browser) visit(t *testing.T, path, sel string) {
	t.Helper()
	b.do(t, "open "+path, chromedp.Navigate(b.base+path), chromedp.WaitVisible(chromedp.CSS(sel)))
}

// inflightAPI returns the /v1 requests of the document on screen that are
// under way, by ID. (The browser does not always report the end of a
// request that a document it left had cancelled, so those are not
// counted.)
func (b *browser) inflightAPI() map[network.RequestID]string {
	b.mu.Lock()
	defer b.mu.Unlock()
	out := map[network.RequestID]string{}
	for id, r := range b.inflight {
		if r.loader == b.document {
			out[id] = r.url
		}
	}
	return out
}

// setHidden makes the page believe its tab is hidden (or shown again), as
// when the user switches tabs.
func (b *browser) setHidden(t *testing.T, hidden bool) {
	t.Helper()
	b.do(t, "set the tab's visibility", chromedp.Evaluate[chromedp.Void](fmt.Sprintf(`(() => {
		Object.defineProperty(document, 'hidden', {configurable: true, get: () => %[1]t});
		Object.defineProperty(document, 'visibilityState', {configurable: true, get: () => %[1]t ? 'hidden' : 'visible'});
		document.dispatchEvent(new Event('visibilitychange'));
	})()`, hidden)))
}

// getText reads a plain-text URL of the agent.
func getText(t *testing.T, u string) (string, error) {
	t.Helper()
	c := &http.Client{Timeout: 30 * time.Second}
	resp, err := c.Get(u)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("GET %s: %s: %s", u, resp.Status, b)
	}
	return string(b), err
}

// TestWebUI: a dev agent runs a raw_exec job and a job that cannot be
// placed; every page of the UI loads in headless Chromium without console
// errors or failed requests and shows the job, the allocation (its task
// events in order, its log as it grows), the node (its driver and the
// allocation), the placement failure in words, the evaluations and the
// leader; links navigate in the page; the ACL token entered is sent with
// the API requests.
func TestWebUI(t *testing.T) {
	t.Parallel()
	chrome := findChromium(t)
	a := startAgent(t)
	c := a.client(t)

	if r := a.cli(t, "job", "run", "-detach", writeFile(t, "ui-web.nomad.hcl", uiJob)); r.code != 0 {
		t.Fatalf("job run: %s", r)
	}
	if r := a.cli(t, "job", "run", "-detach", writeFile(t, "ui-toobig.nomad.hcl", uiTooBigJob)); r.code != 0 {
		t.Fatalf("job run: %s", r)
	}
	var alloc *api.AllocationListStub
	waitFor(t, 90*time.Second, "the ui-web allocation to run", func() (bool, string) {
		allocs, _, err := c.Jobs().Allocations("ui-web", false, nil)
		if err != nil {
			return false, err.Error()
		}
		for _, al := range allocs {
			if al.ClientStatus == api.AllocClientStatusRunning {
				alloc = al
				return true, ""
			}
		}
		return false, fmt.Sprintf("%d allocations, none running", len(allocs))
	})
	waitFor(t, 60*time.Second, "the task's first log line", func() (bool, string) {
		out, err := getText(t, a.addr+"/v1/client/fs/logs/"+alloc.ID+"?task=server&type=stdout&plain=true")
		if err != nil {
			return false, err.Error()
		}
		return strings.Contains(out, "ui-hello-from-the-task"), "log so far: " + out
	})
	const uiSecret = "s3cret-value-ui"
	if _, _, err := c.Variables().Put(&api.Variable{Path: "ui/app/config",
		Items: map[string]string{"user": "app", "password": uiSecret}}, false, 0, nil); err != nil {
		t.Fatalf("create the variable: %v", err)
	}
	var reg *api.ServiceRegistration
	waitFor(t, 60*time.Second, "the ui-web-http service registration", func() (bool, string) {
		regs, _, err := c.Services().Get("ui-web-http", nil)
		if err != nil {
			return false, err.Error()
		}
		if len(regs) != 1 {
			return false, fmt.Sprintf("%d registrations", len(regs))
		}
		reg = regs[0]
		return true, ""
	})
	waitFor(t, 60*time.Second, "the placement failure of ui-toobig", func() (bool, string) {
		evals, _, err := c.Jobs().Evaluations("ui-toobig", nil)
		if err != nil {
			return false, err.Error()
		}
		for _, e := range evals {
			if len(e.FailedTGAllocs) > 0 {
				return true, ""
			}
		}
		return false, fmt.Sprintf("%d evaluations without failures", len(evals))
	})
	nodeID := alloc.NodeID
	jobLink := `a[href="/ui/jobs/ui-web"]`
	allocLink := fmt.Sprintf(`a[href="/ui/allocations/%s"]`, alloc.ID)
	nodeLink := fmt.Sprintf(`a[href="/ui/clients/%s"]`, nodeID)

	b := newBrowser(t, chrome, a.addr)

	t.Run("root redirects to the jobs", func(t *testing.T) {
		b.visit(t, "/", jobLink)
		ctx, cancel := context.WithTimeout(b.ctx, 30*time.Second)
		defer cancel()
		loc, err := chromedp.Run(ctx, chromedp.Location())
		if err != nil || !strings.HasSuffix(loc, "/ui/jobs") {
			t.Errorf("location after / = %q (%v), want .../ui/jobs", loc, err)
		}
		b.waitJS(t, "both jobs and their counts", textHas("#jobs", "ui-web", "ui-toobig", "1 running", "1 queued"))
		b.screenshot(t, "jobs")
		b.checkClean(t, "jobs")
	})

	t.Run("a link navigates in the page", func(t *testing.T) {
		b.do(t, "mark the document", chromedp.Evaluate[chromedp.Void](`window.droverTestMark = 1`))
		b.click(t, "#jobs "+jobLink)
		b.do(t, "the job page", chromedp.WaitVisible(chromedp.CSS("#allocations "+allocLink)))
		ctx, cancel := context.WithTimeout(b.ctx, 30*time.Second)
		defer cancel()
		if mark, err := chromedp.Run(ctx, chromedp.Evaluate[int](`window.droverTestMark || 0`)); err != nil || mark != 1 {
			t.Errorf("the job link reloaded the document (mark %d, %v): links must route in the page", mark, err)
		}
		b.checkClean(t, "job (by link)")
	})

	t.Run("job", func(t *testing.T) {
		b.visit(t, "/ui/jobs/ui-web", "#allocations "+allocLink)
		b.waitJS(t, "the group and the node", textHas("#groups", "frontend", "server", "raw_exec"))
		b.waitJS(t, "the allocation's node and task state", textHas("#allocations", "running", "server"))
		b.do(t, "the node link", chromedp.WaitVisible(chromedp.CSS("#allocations "+nodeLink)))
		b.do(t, "the evaluation", chromedp.WaitVisible(chromedp.CSS("#evaluations a[href^='/ui/evaluations/']")))
		if text := b.text(t, "main"); strings.Contains(text, "Placement failures") {
			t.Errorf("a job whose allocations are all placed shows placement failures:\n%s", text)
		}
		b.screenshot(t, "job")
		b.checkClean(t, "job")
	})

	t.Run("a hidden tab holds no long poll", func(t *testing.T) {
		// The browser opens at most six connections to the agent for all
		// its tabs: a page in a tab the user left gives its up.
		waitFor(t, 30*time.Second, "the job page's blocking queries", func() (bool, string) {
			return len(b.inflightAPI()) > 0, "no request under way"
		})
		b.setHidden(t, true)
		waitFor(t, 30*time.Second, "the hidden page's requests to end", func() (bool, string) {
			left := b.inflightAPI()
			return len(left) == 0, fmt.Sprintf("still under way: %v", left)
		})
		b.setHidden(t, false)
		waitFor(t, 30*time.Second, "the shown page to watch again", func() (bool, string) {
			return len(b.inflightAPI()) > 0, "no request under way"
		})
		b.checkClean(t, "job, hidden and shown")
	})

	t.Run("leaving the UI ends its long polls first", func(t *testing.T) {
		// The request for the next document must not queue behind the
		// page's blocking queries (up to a minute each): the page ends them
		// before the browser asks for the next one.
		// The record starts before the polls are taken: one that ends (its
		// index moved) between the two would otherwise have no end in it.
		b.mu.Lock()
		b.order = nil
		b.mu.Unlock()
		var polls map[network.RequestID]string
		waitFor(t, 30*time.Second, "the job page's blocking queries", func() (bool, string) {
			polls = b.inflightAPI()
			return len(polls) > 0, "no request under way"
		})
		b.visit(t, "/ui/jobs/ui-toobig", "#placement .placement")
		b.mu.Lock()
		order := slices.Clone(b.order)
		b.mu.Unlock()
		doc := slices.IndexFunc(order, func(s string) bool { return strings.HasPrefix(s, "document ") })
		for id, u := range polls {
			if i := slices.Index(order, "end "+string(id)); i < 0 || i > doc {
				t.Errorf("the request %s of the page left ended at event %d, after the next document's response (event %d): %v", u, i, doc, order)
			}
		}
		b.checkClean(t, "job, left")
	})

	t.Run("placement failure explained", func(t *testing.T) {
		b.waitJS(t, "the failure in words", textHas("#placement", `Group "huge": 1 allocation not placed`,
			"too little free memory", "9.5 TiB", "lower the group's memory request"))
		b.screenshot(t, "placement")
		b.checkClean(t, "placement failure")
	})

	t.Run("placement failures in words", func(t *testing.T) {
		// placement.js's reasons() for the scheduler's metrics, run in the
		// browser on the module the page loaded.
		tests := []struct {
			name   string
			metric string // an AllocationMetric as JSON
			ask    string // what one allocation asks for, or null
			want   []string
		}{
			{"no node evaluated", `{"NodesEvaluated": 0, "NodesInPool": 0}`, `null`,
				[]string{"No node was eligible", "drover node status"}},
			{"empty datacenter", `{"NodesEvaluated": 0, "NodesAvailable": {"dc2": 0}}`, `null`,
				[]string{`No node is available in datacenter "dc2"`, `datacenter = "dc2"`}},
			{"missing driver", `{"NodesEvaluated": 3, "NodesFiltered": 3, "ConstraintFiltered": {"missing drivers": 3}}`, `null`,
				[]string{"3 nodes lack a healthy driver", "plugin configuration"}},
			{"constraint", `{"NodesEvaluated": 2, "NodesFiltered": 1, "ConstraintFiltered": {"${attr.kernel.name} = windows": 1}}`, `null`,
				[]string{"1 node does not satisfy the constraint ${attr.kernel.name} = windows", "Relax the constraint"}},
			{"class filtered", `{"NodesEvaluated": 2, "ClassFiltered": {"gpu": 2}}`, `null`,
				[]string{`2 nodes of class "gpu" were filtered out`}},
			{"cpu exhausted", `{"NodesEvaluated": 1, "NodesExhausted": 1, "DimensionExhausted": {"cpu": 1}}`, `{"cpu": 4000, "memory": 64}`,
				[]string{"1 node has too little free CPU for the 4.0 GHz that one allocation asks for", "lower the group's cpu request"}},
			{"device missing", `{"NodesEvaluated": 1, "NodesFiltered": 1, "ConstraintFiltered": {"missing devices: nvidia/gpu": 1}}`, `null`,
				[]string{`1 node has no device "nvidia/gpu"`}},
			{"device busy", `{"NodesEvaluated": 2, "NodesExhausted": 2, "DimensionExhausted": {"devices: nvidia/gpu": 2}}`, `null`,
				[]string{"2 nodes have no free healthy instance of device nvidia/gpu", "Wait for the instances in use"}},
			{"distinct hosts", `{"NodesEvaluated": 2, "ConstraintFiltered": {"distinct_hosts": 2}}`, `null`,
				[]string{"2 nodes already run an allocation of this job", "distinct hosts"}},
			{"nothing recorded", `{"NodesEvaluated": 4}`, `null`,
				[]string{"The scheduler recorded no reason"}},
		}
		for _, tc := range tests {
			ctx, cancel := context.WithTimeout(b.ctx, 30*time.Second)
			got, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](fmt.Sprintf(`(async () => {
				const base = document.querySelector('script[type=module]').src.replace(/js\/app\.js$/, '');
				const {reasons} = await import(base + 'js/placement.js');
				return reasons(%s, %s).map(r => r.text + ' | ' + (r.hint || ''));
			})()`, tc.metric, tc.ask), chromedp.EvalAwaitPromise))
			cancel()
			if err != nil {
				t.Fatalf("%s: %v", tc.name, err)
			}
			text := strings.Join(got, "\n")
			for _, w := range tc.want {
				if !strings.Contains(text, w) {
					t.Errorf("%s: the explanation does not say %q:\n%s", tc.name, w, text)
				}
			}
		}
		b.checkClean(t, "placement module")
	})

	t.Run("allocation", func(t *testing.T) {
		b.visit(t, "/ui/allocations/"+alloc.ID, "#tasks .task")
		b.waitJS(t, "the task's events", textHas("#tasks", "Received", "Task Setup", "Started", "Task started by client"))
		// The events are in the order they happened.
		events := b.text(t, "#tasks table")
		iR, iS, iT := strings.Index(events, "Received"), strings.Index(events, "Task Setup"), strings.Index(events, "Started")
		if iR >= iS || iS >= iT {
			t.Errorf("task events are not in order (Received %d, Task Setup %d, Started %d):\n%s", iR, iS, iT, events)
		}
		b.waitJS(t, "why it is on its node", textHas("#placement", "evaluated 1 of 1 nodes", "binpack"))
		b.waitJS(t, "the log's first line", textHas("#log", "ui-hello-from-the-task", "tick 1"))
		// The log follows: a tick written after the page loaded appears.
		ticks, err := chromedp.Run(b.ctx, chromedp.Evaluate[int](
			`Math.max(0, ...[...document.querySelector('#log').textContent.matchAll(/tick (\d+)/g)].map(m => +m[1]))`))
		if err != nil {
			t.Fatal(err)
		}
		b.waitJS(t, fmt.Sprintf("a tick after tick %d", ticks), fmt.Sprintf(
			`[...document.querySelector('#log').textContent.matchAll(/tick (\d+)/g)].some(m => +m[1] > %d)`, ticks))
		b.screenshot(t, "allocation")
		// stderr is one click away.
		b.click(t, `button[data-type="stderr"]`)
		b.waitJS(t, "stderr's lines", textHas("#log", "warn "))
		if text := b.text(t, "#log"); strings.Contains(text, "tick") {
			t.Errorf("stderr shows stdout's lines:\n%.300s", text)
		}
		b.checkClean(t, "allocation")
	})

	t.Run("nodes", func(t *testing.T) {
		b.visit(t, "/ui/clients", "#nodes "+nodeLink)
		b.waitJS(t, "the node's status and drivers", textHas("#nodes", "ready", "raw_exec"))
		b.screenshot(t, "nodes")
		b.checkClean(t, "nodes")
	})

	t.Run("node", func(t *testing.T) {
		b.visit(t, "/ui/clients/"+nodeID, "#allocations "+allocLink)
		b.waitJS(t, "drivers with health and resources", textHas("main", "raw_exec", "healthy", "CPU", "Memory", "ui-web"))
		b.screenshot(t, "node")
		b.checkClean(t, "node")
	})

	t.Run("evaluations", func(t *testing.T) {
		b.visit(t, "/ui/evaluations", `#evaluations a[href="/ui/jobs/ui-toobig"]`)
		b.waitJS(t, "the blocked evaluation", textHas("#evaluations", "blocked", "huge"))
		b.click(t, `#evaluations tr:has(.fail) a[href^="/ui/evaluations/"]`)
		b.do(t, "the evaluation's page", chromedp.WaitVisible(chromedp.CSS("#placement .placement")))
		b.checkClean(t, "evaluations")
	})

	t.Run("deployments", func(t *testing.T) {
		b.visit(t, "/ui/deployments", "#deployments .section-body :is(table, .empty)")
		b.checkClean(t, "deployments")
	})

	t.Run("servers", func(t *testing.T) {
		b.visit(t, "/ui/servers", "#servers .status-leader")
		b.waitJS(t, "this agent", textHas("#agent", "Leader", "yes"))
		b.checkClean(t, "servers")
	})

	t.Run("services", func(t *testing.T) {
		b.visit(t, "/ui/services", `#services a[href="/ui/services/ui-web-http"]`)
		b.waitJS(t, "the service's namespace, tags, job and instance count",
			textHas("#services", "ui-web-http", "default", "ui", "frontend", "ui-web")+
				` && [...document.querySelectorAll('#services tr')].some(r => r.textContent.includes('ui-web-http') && r.lastElementChild.textContent.trim() === '1')`)
		b.screenshot(t, "services")
		b.checkClean(t, "services")
		b.click(t, `#services a[href="/ui/services/ui-web-http"]`)
		b.do(t, "the service's instance", chromedp.WaitVisible(chromedp.CSS("#instances "+allocLink)))
		b.waitJS(t, "the instance's address, port and node", textHas("#instances", reg.Address, fmt.Sprint(reg.Port))+
			fmt.Sprintf(` && !!document.querySelector('#instances %s')`, nodeLink))
		b.screenshot(t, "service")
		b.checkClean(t, "service")
	})

	t.Run("variables", func(t *testing.T) {
		varLink := `a[href="/ui/variables/var/ui/app/config"]`
		b.visit(t, "/ui/variables", "#variables "+varLink)
		b.waitJS(t, "the variable's path and namespace", textHas("#variables", "ui/app/config", "default"))
		b.screenshot(t, "variables")
		b.checkClean(t, "variables")
		b.click(t, "#variables "+varLink)
		b.do(t, "the variable's keys", chromedp.WaitVisible(chromedp.CSS(`#items code.secret[data-key="password"]`)))
		b.waitJS(t, "both keys", textHas("#items", "password", "user"))
		if text := b.text(t, "#items"); strings.Contains(text, uiSecret) {
			t.Errorf("the variable page shows a value before it is asked for:\n%s", text)
		}
		b.screenshot(t, "variable")
		b.click(t, `#items tr:has(code.secret[data-key="password"]) button.reveal`)
		b.waitJS(t, "the value shown on request", textHas("#items", uiSecret))
		b.checkClean(t, "variable")
	})

	t.Run("ACL token is sent", func(t *testing.T) {
		b.visit(t, "/ui/settings/tokens", "#token-secret")
		b.do(t, "type a token", chromedp.SendKeys(chromedp.CSS("#token-secret"), "ui-test-secret"))
		b.click(t, `.token-form button[type="submit"]`)
		b.waitJS(t, "the token marked as set", textHas("#token-link", "(set)"))
		b.mu.Lock()
		b.tokens = nil
		b.mu.Unlock()
		b.visit(t, "/ui/jobs", jobLink)
		b.mu.Lock()
		tokens := b.tokens
		b.mu.Unlock()
		if len(tokens) == 0 {
			t.Fatal("the jobs page made no /v1 request")
		}
		for _, tok := range tokens {
			if tok != "ui-test-secret" {
				t.Errorf("a /v1 request carried X-Nomad-Token %q, want the saved token", tok)
			}
		}
		b.visit(t, "/ui/settings/tokens", "#token-secret")
		b.click(t, `.token-form button[type="button"]`)
		b.waitJS(t, "the token cleared", `!document.querySelector('#token-link').textContent.includes('(set)')`)
		b.checkClean(t, "tokens")
	})

	t.Run("unknown page", func(t *testing.T) {
		b.visit(t, "/ui/no/such/page", "main h1")
		if text := b.text(t, "main h1"); text != "Page not found" {
			t.Errorf("heading %q, want Page not found", text)
		}
		b.checkClean(t, "unknown page")
	})
}

// TestWebUIDisabled: with ui { enabled = false } the agent serves no UI and
// says how to turn it on; the API is unchanged.
func TestWebUIDisabled(t *testing.T) {
	t.Parallel()
	a := startDevAgentWithConfig(t, "ui {\n  enabled = false\n}\n")
	noRedirect := &http.Client{Timeout: 30 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	for _, tc := range []struct {
		path string
		code int
		has  string
	}{
		{"/ui/", http.StatusNotFound, "ui { enabled = true }"},
		{"/ui/jobs", http.StatusNotFound, "disabled"},
		{"/", http.StatusNotFound, "no such endpoint"},
		{"/v1/jobs", http.StatusOK, "["},
	} {
		resp, err := noRedirect.Get(a.addr + tc.path)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != tc.code || !strings.Contains(string(body), tc.has) {
			t.Errorf("GET %s: %d %.200q, want %d with %q", tc.path, resp.StatusCode, body, tc.code, tc.has)
		}
	}
}
