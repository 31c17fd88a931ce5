package docker

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"

	"github.com/moby/moby/api/types/registry"
)

// Docker Hub's names: images without a registry come from it, and Docker's
// config files and credential helpers know it by its old index address.
const (
	dockerHubRegistry = "docker.io"
	dockerHubAuthKey  = "https://index.docker.io/v1/"
	// credHelperPrefix starts the name of every credential helper program.
	credHelperPrefix = "docker-credential-"
)

// registryOf returns the registry host of an image reference
// ("127.0.0.1:5000" for "127.0.0.1:5000/app:1"), docker.io for one without.
func registryOf(image string) string {
	first, _, ok := strings.Cut(normalizeImage(image), "/")
	if ok && (strings.ContainsAny(first, ".:") || first == "localhost") {
		return first
	}
	return dockerHubRegistry
}

// authSource finds registry credentials for an image, in Nomad's order:
// the task's auth block, then the plugin's auth config file (auths, then
// credHelpers, then credsStore), then the plugin's auth helper. The first
// that has credentials wins; nil: pull anonymously.
type authSource struct {
	configFile string
	helper     string
}

// resolve returns the credentials for image, or nil for none. An error
// means a source could not be read (a helper failed, a file is invalid).
func (a authSource) resolve(ctx context.Context, image string, task TaskAuthConfig) (*registry.AuthConfig, error) {
	reg := registryOf(image)
	if !task.empty() {
		server := task.ServerAddress
		if server == "" {
			server = reg
		}
		return &registry.AuthConfig{Username: task.Username, Password: task.Password, ServerAddress: server}, nil
	}
	if a.configFile != "" {
		auth, err := authFromConfigFile(ctx, a.configFile, reg)
		if err != nil || auth != nil {
			return auth, err
		}
	}
	if a.helper != "" {
		return authFromHelper(ctx, a.helper, reg)
	}
	return nil, nil
}

// dockerConfigFile is the part of a Docker config.json credentials come
// from.
type dockerConfigFile struct {
	Auths map[string]struct {
		Auth          string `json:"auth"`
		Username      string `json:"username"`
		Password      string `json:"password"`
		IdentityToken string `json:"identitytoken"`
	} `json:"auths"`
	CredHelpers map[string]string `json:"credHelpers"`
	CredsStore  string            `json:"credsStore"`
}

// authFromConfigFile looks reg up in a Docker config.json: its auths
// entry (keys may carry a scheme and path: "https://reg/v1/"), else its
// credHelpers entry, else its credsStore.
func authFromConfigFile(ctx context.Context, file, reg string) (*registry.AuthConfig, error) {
	b, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("read the docker plugin's auth config file: %w", err)
	}
	var cf dockerConfigFile
	if err := json.Unmarshal(b, &cf); err != nil {
		return nil, fmt.Errorf("auth config file %s: %w", file, err)
	}
	for key, e := range cf.Auths {
		if authKeyHost(key) != authKeyHost(reg) {
			continue
		}
		auth := &registry.AuthConfig{Username: e.Username, Password: e.Password, IdentityToken: e.IdentityToken, ServerAddress: reg}
		if e.Auth != "" {
			dec, err := base64.StdEncoding.DecodeString(e.Auth)
			if err != nil {
				return nil, fmt.Errorf("auth config file %s: auths[%q].auth is not base64: %w", file, key, err)
			}
			user, pass, ok := strings.Cut(string(dec), ":")
			if !ok {
				return nil, fmt.Errorf("auth config file %s: auths[%q].auth is not user:password", file, key)
			}
			auth.Username, auth.Password = user, pass
		}
		if auth.Username != "" || auth.Password != "" || auth.IdentityToken != "" {
			return auth, nil
		}
	}
	for key, helper := range cf.CredHelpers {
		if authKeyHost(key) == authKeyHost(reg) {
			return authFromHelper(ctx, helper, reg)
		}
	}
	if cf.CredsStore != "" {
		return authFromHelper(ctx, cf.CredsStore, reg)
	}
	return nil, nil
}

// authKeyHost reduces a config file key or registry to its host; Docker
// Hub's names all become docker.io.
func authKeyHost(key string) string {
	h := strings.TrimPrefix(strings.TrimPrefix(key, "https://"), "http://")
	h, _, _ = strings.Cut(h, "/")
	switch h {
	case "index.docker.io", "registry-1.docker.io", "registry.hub.docker.com":
		return dockerHubRegistry
	}
	return h
}

// authFromHelper runs docker-credential-<helper> get with the registry's
// address on stdin, as Docker's credential helper protocol says. A helper
// that has no credentials for it gives none, not an error.
func authFromHelper(ctx context.Context, helper, reg string) (*registry.AuthConfig, error) {
	if strings.ContainsRune(helper, os.PathSeparator) {
		return nil, fmt.Errorf("credential helper %q: a name, not a path", helper)
	}
	server := reg
	if reg == dockerHubRegistry {
		server = dockerHubAuthKey
	}
	cmd := exec.CommandContext(ctx, credHelperPrefix+helper, "get")
	cmd.Stdin = strings.NewReader(server)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		out := strings.TrimSpace(stdout.String() + " " + stderr.String())
		if strings.Contains(out, "credentials not found") {
			return nil, nil
		}
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return nil, fmt.Errorf("credential helper %s%s for %s failed: %v: %s", credHelperPrefix, helper, server, err, out)
		}
		return nil, fmt.Errorf("credential helper %s%s: %w", credHelperPrefix, helper, err)
	}
	var resp struct {
		Username string `json:"Username"`
		Secret   string `json:"Secret"`
	}
	if err := json.Unmarshal(stdout.Bytes(), &resp); err != nil {
		return nil, fmt.Errorf("credential helper %s%s: its answer is not JSON: %w", credHelperPrefix, helper, err)
	}
	if resp.Username == "" && resp.Secret == "" {
		return nil, nil
	}
	auth := &registry.AuthConfig{ServerAddress: reg}
	if resp.Username == "<token>" {
		auth.IdentityToken = resp.Secret
	} else {
		auth.Username, auth.Password = resp.Username, resp.Secret
	}
	return auth, nil
}
