package docker

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"strings"
)

// unconfinedOpts are security_opt values that lift a container's
// confinement; like privileged, they need the plugin's allow_privileged.
var unconfinedOpts = map[string]bool{
	"seccomp=unconfined":     true,
	"seccomp:unconfined":     true,
	"apparmor=unconfined":    true,
	"apparmor:unconfined":    true,
	"label=disable":          true,
	"label:disable":          true,
	"systempaths=unconfined": true,
}

// securityOpts checks security_opt as Docker's command line and Nomad's
// driver do ("key=value", "key:value" or "no-new-privileges") and sends a
// seccomp profile given as a file inline. The file is read by the agent,
// so its path follows the rules of volumes (inside the allocation unless
// the plugin's volumes are enabled). Options that lift confinement need
// allow_privileged.
func securityOpts(opts []string, paths hostPaths, allowPrivileged bool) ([]string, error) {
	out := make([]string, 0, len(opts))
	for _, opt := range opts {
		if unconfinedOpts[opt] && !allowPrivileged {
			return nil, fmt.Errorf("security_opt %q lifts the container's confinement: set allow_privileged = true in the docker plugin's config to allow it", opt)
		}
		key, val, ok := strings.Cut(opt, "=")
		if !ok && opt != "no-new-privileges" {
			key, val, ok = strings.Cut(opt, ":")
			if !ok {
				return nil, fmt.Errorf("security_opt %q: want \"key=value\" (such as \"no-new-privileges=true\")", opt)
			}
		}
		if key == "seccomp" && val != "unconfined" && val != "" && !strings.HasPrefix(strings.TrimSpace(val), "{") {
			profile, err := readSeccompProfile(val, paths)
			if err != nil {
				return nil, fmt.Errorf("security_opt %q: %w", opt, err)
			}
			opt = "seccomp=" + profile
		}
		out = append(out, opt)
	}
	return out, nil
}

// readSeccompProfile returns the JSON profile in file, compacted.
func readSeccompProfile(file string, paths hostPaths) (string, error) {
	p, err := paths.resolve(file)
	if err != nil {
		return "", err
	}
	b, err := os.ReadFile(p)
	if err != nil {
		return "", fmt.Errorf("read the seccomp profile: %w", err)
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, b); err != nil {
		return "", fmt.Errorf("seccomp profile %s is not JSON: %w", file, err)
	}
	return buf.String(), nil
}
