package command

import (
	"bytes"
	"maps"

	"fmt"
	"strings"

	"github.com/drover-io/drover/api"
	"github.com/drover-io/drover/inputlimit"
	"github.com/drover-io/drover/jobspec"
)

// jobVars are the -var and -var-file flags of job run, plan and validate.
type jobVars struct {
	vars  varFlag
	files fileFlag
}

// varFlag collects repeated -var name=value flags.
type varFlag map[string]string

func (v varFlag) String() string { return "" }

// Set takes one name=value pair.
func (v varFlag) Set(s string) error {
	name, value, ok := strings.Cut(s, "=")
	if !ok || strings.TrimSpace(name) == "" {
		return fmt.Errorf("-var %q: use -var 'name=value'", s)
	}
	v[strings.TrimSpace(name)] = value
	return nil
}

// fileFlag collects repeated -var-file flags, in order.
type fileFlag []string

func (f *fileFlag) String() string { return "" }

// Set takes one path.
func (f *fileFlag) Set(s string) error {
	if s == "" {
		return fmt.Errorf("-var-file needs a path")
	}
	*f = append(*f, s)
	return nil
}

// addVarFlags adds -var and -var-file to fs.
func addVarFlags(fs *flagSet) *jobVars {
	jv := &jobVars{vars: varFlag{}}
	fs.Var(jv.vars, "var", "A value for a variable of the job file, as 'name=value'; repeat it for several. Wins over -var-file and NOMAD_VAR_<name>.")
	fs.Var(&jv.files, "var-file", "A file of variable values (HCL `name = value` lines, or JSON when it ends in .json); repeat it for several, later files win.")
	return jv
}

// varOptions reads the -var-file files and gathers the values the job file's
// variables take: NOMAD_VAR_<name> from the environment, the files, the
// -var flags.
func (m *Meta) varOptions(jv *jobVars) (jobspec.Options, error) {
	opts := jobspec.Options{AllowFS: true}
	if m.environ != nil {
		opts.Env = jobspec.EnvVars(m.environ())
	}
	if jv == nil {
		return opts, nil
	}
	for _, path := range jv.files {
		src, err := inputlimit.ReadFile(path, inputlimit.MaxHCLBytes)
		if err != nil {
			return opts, fmt.Errorf("read variable file %s: %w", path, err)
		}
		opts.VarFiles = append(opts.VarFiles, jobspec.VarFile{Name: path, Content: src})
	}
	opts.Vars = jv.vars
	return opts, nil
}

// jobSource returns the job file and variables a job was parsed from, sent
// with the job so that the servers keep it with its version (as Nomad's
// job run does); nil when the file cannot be read again.
func (m *Meta) jobSource(path string, jv *jobVars) *api.JobSubmission {
	src, err := m.readFile(path)
	if err != nil {
		return nil
	}
	sub := &api.JobSubmission{Source: string(src), Format: "hcl2"}
	if strings.HasSuffix(path, ".json") || bytes.HasPrefix(bytes.TrimSpace(src), []byte("{")) {
		sub.Format = "json"
	}
	if jv == nil {
		return sub
	}
	if len(jv.vars) > 0 {
		sub.VariableFlags = maps.Clone(map[string]string(jv.vars))
	}
	var vars []string
	for _, p := range jv.files {
		if b, err := inputlimit.ReadFile(p, inputlimit.MaxHCLBytes); err == nil {
			vars = append(vars, string(b))
		}
	}
	sub.Variables = strings.Join(vars, "\n")
	return sub
}
