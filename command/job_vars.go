package command

import (
	"fmt"
	"strings"

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
