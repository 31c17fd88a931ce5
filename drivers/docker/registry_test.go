package docker

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/drover-io/drover/drivers/shared/testwait"
)

// writeHelper writes the credential helper docker-credential-<name> into
// dir: it answers get for registry with user and pass, and says
// "credentials not found" for any other; fail makes it fail outright.
func writeHelper(t *testing.T, dir, name, registry, user, pass string, fail bool) {
	t.Helper()
	script := `#!/bin/sh
[ "$1" = get ] || exit 2
read server
if [ "$server" = "` + registry + `" ]; then
	echo '{"ServerURL":"` + registry + `","Username":"` + user + `","Secret":"` + pass + `"}'
	exit 0
fi
echo "credentials not found in native keychain"
exit 1
`
	if fail {
		script = "#!/bin/sh\necho 'helper broken' >&2\nexit 3\n"
	}
	if err := os.WriteFile(filepath.Join(dir, credHelperPrefix+name), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
}

func writeJSON(t *testing.T, path string, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// runImage starts a task that prints ok with conf and returns StartTask's
// error, or waits for a successful exit.
func (h *harness) runImage(conf TaskConfig) error {
	h.t.Helper()
	if conf.Command == "" {
		conf.Command, conf.Args = "sh", []string{"-c", "echo ok"}
	}
	cfg := h.config(conf)
	if _, err := h.d.StartTask(context.Background(), cfg); err != nil {
		return err
	}
	h.t.Cleanup(func() { _ = h.d.DestroyTask(context.Background(), cfg.ID, true) })
	if res := h.wait(cfg.ID); !res.Successful() {
		h.t.Fatalf("task exited %+v", res)
	}
	if got := readFile(h.t, cfg.StdoutPath); got != "ok\n" {
		h.t.Fatalf("stdout = %q", got)
	}
	return nil
}

// TestRegistryAuth pulls from a registry on loopback with credentials
// from each source Nomad's driver reads: the task's auth, a Docker config
// file (auths, credHelpers, credsStore) and a credential helper; and
// auth_soft_fail.
func TestRegistryAuth(t *testing.T) {
	base := newHarness(t, nil)
	reg := newTestRegistry(t)
	img := saveTestImage(t, base.d.client).withLabel("io.drover.test", testAllocPrefix+"auth")
	reg.push(t, "drover/private", "v1", img, true)
	reg.push(t, "drover/public", "v1", img, false)
	private, public := reg.host+"/drover/private:v1", reg.host+"/drover/public:v1"
	t.Cleanup(func() {
		removeImageForce(base.d.client, private)
		removeImageForce(base.d.client, public)
	})

	dir := t.TempDir()
	writeHelper(t, dir, "drovertest", reg.host, reg.user, reg.pass, false)
	writeHelper(t, dir, "droverwrong", reg.host, reg.user, "wrong", false)
	writeHelper(t, dir, "droverfail", "", "", "", true)
	writeHelper(t, dir, "drovernone", "other.example:5000", "u", "p", false)
	t.Setenv("PATH", dir+string(os.PathListSeparator)+os.Getenv("PATH"))
	auths := writeJSON(t, filepath.Join(dir, "auths.json"), map[string]any{"auths": map[string]any{"http://" + reg.host + "/v2/": map[string]string{"auth": basicAuth(reg.user, reg.pass)}}})
	helpers := writeJSON(t, filepath.Join(dir, "helpers.json"), map[string]any{"credHelpers": map[string]string{reg.host: "drovertest"}})
	store := writeJSON(t, filepath.Join(dir, "store.json"), map[string]any{"auths": map[string]any{"other.example": map[string]string{"auth": basicAuth("a", "b")}}, "credsStore": "drovertest"})

	cases := []struct {
		name           string
		plugin         Config
		conf           TaskConfig
		wantErr        string
		wantAuthorized bool
	}{
		{name: "private without credentials", conf: TaskConfig{Image: private}, wantErr: "could not be pulled"},
		{name: "task auth", conf: TaskConfig{Image: private, Auth: TaskAuthConfig{Username: reg.user, Password: reg.pass}}, wantAuthorized: true},
		{name: "task auth with a wrong password", conf: TaskConfig{Image: private, Auth: TaskAuthConfig{Username: reg.user, Password: "nope"}}, wantErr: "could not be pulled"},
		{name: "config file auths", plugin: Config{Auth: AuthPluginConfig{Config: auths}}, conf: TaskConfig{Image: private}, wantAuthorized: true},
		{name: "config file credHelpers", plugin: Config{Auth: AuthPluginConfig{Config: helpers}}, conf: TaskConfig{Image: private}, wantAuthorized: true},
		{name: "config file credsStore", plugin: Config{Auth: AuthPluginConfig{Config: store}}, conf: TaskConfig{Image: private}, wantAuthorized: true},
		{name: "plugin helper", plugin: Config{Auth: AuthPluginConfig{Helper: "drovertest"}}, conf: TaskConfig{Image: private}, wantAuthorized: true},
		{name: "task auth wins over the helper", plugin: Config{Auth: AuthPluginConfig{Helper: "droverwrong"}}, conf: TaskConfig{Image: private, Auth: TaskAuthConfig{Username: reg.user, Password: reg.pass}}, wantAuthorized: true},
		{name: "helper without credentials for the registry", plugin: Config{Auth: AuthPluginConfig{Helper: "drovernone"}}, conf: TaskConfig{Image: public}},
		{name: "failing helper", plugin: Config{Auth: AuthPluginConfig{Helper: "droverfail"}}, conf: TaskConfig{Image: public}, wantErr: "find registry credentials: credential helper docker-credential-droverfail"},
		{name: "failing helper with auth_soft_fail", plugin: Config{Auth: AuthPluginConfig{Helper: "droverfail"}}, conf: TaskConfig{Image: public, AuthSoftFail: true}},
		{name: "missing config file", plugin: Config{Auth: AuthPluginConfig{Config: filepath.Join(dir, "none.json")}}, conf: TaskConfig{Image: public}, wantErr: "auth config file"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			removeImageForce(base.d.client, private)
			removeImageForce(base.d.client, public)
			repoRef := strings.TrimPrefix(tc.conf.Image, reg.host+"/")
			_, authBefore := reg.gets(repoRef)
			plugin := tc.plugin
			h := newHarness(t, &plugin)
			err := h.runImage(tc.conf)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("StartTask err = %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("StartTask: %v", err)
			}
			if _, authAfter := reg.gets(repoRef); tc.wantAuthorized && authAfter == authBefore {
				t.Fatal("the registry saw no request with the credentials")
			}
		})
	}
}

// tagImage tags the local image src as ref.
func tagImage(t *testing.T, c *client, src, ref string) {
	t.Helper()
	repo, tag := splitImageRef(ref)
	if err := c.doJSON(context.Background(), http.MethodPost, "/images/"+src+"/tag", url.Values{"repo": {repo}, "tag": {tag}}, nil, nil, true); err != nil {
		t.Fatalf("tag %s as %s: %v", src, ref, err)
	}
	t.Cleanup(func() { removeImageForce(c, ref) })
}

// TestPullPolicy: a present image is not pulled again unless force_pull
// is set or its tag is latest; a failed pull of latest falls back to the
// local copy, a failed force_pull does not.
func TestPullPolicy(t *testing.T) {
	h := newHarness(t, nil)
	c := h.d.client
	reg := newTestRegistry(t)
	img := saveTestImage(t, c).withLabel("io.drover.test", testAllocPrefix+"pull")
	reg.push(t, "drover/app", "v1", img, false)
	reg.push(t, "drover/app", "latest", img, false)
	v1, latest := reg.host+"/drover/app:v1", reg.host+"/drover/app:latest"
	removeImageForce(c, v1)
	removeImageForce(c, latest)
	t.Cleanup(func() {
		removeImageForce(c, v1)
		removeImageForce(c, latest)
	})

	steps := []struct {
		name      string
		conf      TaskConfig
		wantPulls int // manifest requests for the reference the step uses
	}{
		{"missing: pulled", TaskConfig{Image: v1}, 1},
		{"present: not pulled", TaskConfig{Image: v1}, 0},
		{"force_pull", TaskConfig{Image: v1, ForcePull: true}, 1},
		{"latest: pulled", TaskConfig{Image: latest}, 1},
		{"latest again: pulled again", TaskConfig{Image: latest}, 1},
		{"no tag is latest", TaskConfig{Image: reg.host + "/drover/app"}, 1},
	}
	for _, s := range steps {
		repoRef := strings.TrimPrefix(s.conf.Image, reg.host+"/")
		if !strings.Contains(repoRef, ":") {
			repoRef += ":latest"
		}
		before, _ := reg.gets(repoRef)
		if err := h.runImage(s.conf); err != nil {
			t.Fatalf("%s: %v", s.name, err)
		}
		after, _ := reg.gets(repoRef)
		if (after > before) != (s.wantPulls > 0) {
			t.Errorf("%s: manifest requests %d -> %d, want pulled = %v", s.name, before, after, s.wantPulls > 0)
		}
	}

	// An image the registry does not have, present locally.
	gone := reg.host + "/drover/gone:v1"
	goneLatest := reg.host + "/drover/gone:latest"
	tagImage(t, c, testImage, gone)
	tagImage(t, c, testImage, goneLatest)
	if err := h.runImage(TaskConfig{Image: gone}); err != nil {
		t.Fatalf("present image without a pull: %v", err)
	}
	if err := h.runImage(TaskConfig{Image: goneLatest}); err != nil {
		t.Fatalf("latest whose pull fails should use the local copy: %v", err)
	}
	if err := h.runImage(TaskConfig{Image: gone, ForcePull: true}); err == nil || !strings.Contains(err.Error(), "force_pull") {
		t.Fatalf("force_pull of an image the registry lacks = %v, want an error naming force_pull", err)
	}
}

// TestImagePullTimeout: a registry that never answers is given up on
// after image_pull_timeout.
func TestImagePullTimeout(t *testing.T) {
	h := newHarness(t, nil)
	stall := make(chan struct{})
	srv := newStallingServer(t, stall)
	err := h.runImage(TaskConfig{Image: srv + "/drover/slow:v1", ImagePullTimeout: Duration(time.Second)})
	close(stall)
	if err == nil || !strings.Contains(err.Error(), "image_pull_timeout") {
		t.Fatalf("err = %v, want an image_pull_timeout error", err)
	}
}

// TestImageGCRemovesPulledImage: with a short image_delay, an image the
// driver pulled is removed once its task is destroyed, also by a driver
// that recovered the task after an agent restart; the test image, which
// was there before, is not.
func TestImageGCRemovesPulledImage(t *testing.T) {
	plugin := &Config{GC: GCConfig{ImageDelay: Duration(time.Millisecond)}}
	h := newHarness(t, plugin)
	c := h.d.client
	reg := newTestRegistry(t)
	img := saveTestImage(t, c).withLabel("io.drover.test", testAllocPrefix+"gc")
	reg.push(t, "drover/gc", "v1", img, false)
	ref := reg.host + "/drover/gc:v1"
	removeImageForce(c, ref)
	t.Cleanup(func() { removeImageForce(c, ref) })

	cfg := h.config(TaskConfig{Image: ref, Command: "sh", Args: []string{"-c", "echo ready; exec sleep 1000"}})
	th, err := h.d.StartTask(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	testwait.FileContains(t, "ready", cfg.StdoutPath, "ready")
	h.d.Shutdown() // the agent restarts; the task keeps running

	h2 := newHarness(t, plugin)
	removed := make(chan error, 1)
	h2.d.gc.onRemoved = func(r string, err error) {
		if r == ref {
			removed <- err
		}
	}
	if err := h2.d.RecoverTask(context.Background(), th); err != nil {
		t.Fatal(err)
	}
	if err := h2.d.StopTask(context.Background(), cfg.ID, time.Second, "SIGKILL"); err != nil {
		t.Fatal(err)
	}
	waitResult(t, h2.d, cfg.ID)
	if ok, _ := c.imageExists(context.Background(), ref); !ok {
		t.Fatal("the image went while its task was known")
	}
	if err := h2.d.DestroyTask(context.Background(), cfg.ID, true); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-removed:
		if err != nil {
			t.Fatalf("removal failed: %v", err)
		}
	case <-time.After(60 * time.Second):
		t.Fatal("the image was not removed")
	}
	if ok, err := c.imageExists(context.Background(), ref); ok || err != nil {
		t.Fatalf("image still there: %v", err)
	}
	if ok, _ := c.imageExists(context.Background(), testImage); !ok {
		t.Fatal("the test image was removed")
	}
}

// TestLoadImage loads an image tarball from the task's directory.
func TestLoadImage(t *testing.T) {
	h := newHarness(t, nil)
	c := h.d.client
	tag := "drover-test/loaded-" + strings.TrimSuffix(testAllocPrefix, "-") + ":v1"
	t.Cleanup(func() { removeImageForce(c, tag) })
	tarball := saveTestImage(t, c).withLabel("io.drover.test", testAllocPrefix+"load").tarball(t, tag)

	conf := TaskConfig{Image: tag, Load: "image.tar", Command: "sh", Args: []string{"-c", "echo ok"}}
	cfg := h.config(conf)
	if err := os.WriteFile(filepath.Join(cfg.TaskDir.LocalDir, "image.tar"), tarball, 0o644); err != nil {
		t.Fatal(err)
	}
	h.start(cfg)
	if res := h.wait(cfg.ID); !res.Successful() || readFile(t, cfg.StdoutPath) != "ok\n" {
		t.Fatalf("result %+v, stdout %q", res, readFile(t, cfg.StdoutPath))
	}
	if info := h.inspect(cfg); info.Config.Image != tag {
		t.Fatalf("container image = %q, want %q", info.Config.Image, tag)
	}

	for _, bad := range []struct{ load, image, want string }{
		{"image.tar", "drover-test/other:v1", "holds no image"},
		{"../../../../../../etc/passwd", tag, "outside the allocation"},
		{"missing.tar", tag, "no such file"},
	} {
		cfg := h.config(TaskConfig{Image: bad.image, Load: bad.load, Command: "true"})
		_ = os.WriteFile(filepath.Join(cfg.TaskDir.LocalDir, "image.tar"), tarball, 0o644)
		if _, err := h.d.StartTask(context.Background(), cfg); err == nil || !strings.Contains(err.Error(), bad.want) {
			_ = h.d.DestroyTask(context.Background(), cfg.ID, true)
			t.Errorf("load %q image %q: err = %v, want %q", bad.load, bad.image, err, bad.want)
		}
	}
}
