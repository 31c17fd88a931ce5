package rawexec

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/drover-io/drover/drivers/shared/taskenv"
	"github.com/drover-io/drover/plugins/drivers"
)

// TaskConfig is raw_exec's config block.
type TaskConfig struct {
	Command string   `json:"command"`
	Args    []string `json:"args"`
}

// defaultPath is the PATH a task gets when neither its env nor the agent's
// has one.
const defaultPath = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

// decodeConfig decodes and validates cfg's config block and interpolates
// the task's environment into it.
func decodeConfig(cfg *drivers.TaskConfig) (*TaskConfig, error) {
	conf := &TaskConfig{}
	if err := cfg.DecodeDriverConfig(conf); err != nil {
		return nil, err
	}
	if conf.Command == "" {
		return nil, errors.New(`missing "command" in the task's config block`)
	}
	conf.Command = taskenv.Interpolate(conf.Command, cfg.Env, nil, nil)
	for i, a := range conf.Args {
		conf.Args[i] = taskenv.Interpolate(a, cfg.Env, nil, nil)
	}
	return conf, nil
}

// taskEnv returns the task's environment as KEY=value pairs, with the
// agent's PATH (or a default) when the task sets none.
func taskEnv(env map[string]string) []string {
	out := make([]string, 0, len(env)+1)
	for k, v := range env {
		out = append(out, k+"="+v)
	}
	if _, ok := env["PATH"]; !ok {
		path := os.Getenv("PATH")
		if path == "" {
			path = defaultPath
		}
		out = append(out, "PATH="+path)
	}
	return out
}

// resolveCommand finds the executable for command: an absolute path as is,
// a relative path with a slash under taskDir, a bare name in the task's
// PATH and then in taskDir.
func resolveCommand(command, taskDir string, env map[string]string) (string, error) {
	switch {
	case filepath.IsAbs(command):
		return command, nil
	case strings.Contains(command, "/"):
		return filepath.Join(taskDir, command), nil
	}
	path, ok := env["PATH"]
	if !ok {
		if path = os.Getenv("PATH"); path == "" {
			path = defaultPath
		}
	}
	dirs := filepath.SplitList(path)
	if taskDir != "" {
		dirs = append(dirs, taskDir)
	}
	for _, dir := range dirs {
		if dir == "" {
			continue
		}
		p := filepath.Join(dir, command)
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Mode().Perm()&0o111 != 0 {
			return p, nil
		}
	}
	return "", fmt.Errorf("command %q not found in the task's PATH or task directory", command)
}
