package jobspec

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/drover-io/drover/api"
	"github.com/drover-io/drover/inputlimit"
	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
)

// Parse parses a job file's content; filename is used in error positions.
// Content whose filename ends in ".json", or which starts with "{", is read
// as a JSON job (see parseJSON); anything else as HCL.
func Parse(filename string, src []byte) (*api.Job, error) {
	return parse(filename, src, inputs{})
}

// ParseFile reads and parses a job file. A file larger than
// inputlimit.MaxJSONBytes is refused without being read whole.
func ParseFile(path string) (*api.Job, error) {
	src, err := inputlimit.ReadFile(path, inputlimit.MaxJSONBytes)
	if err != nil {
		if inputlimit.IsLimit(err) {
			return nil, limitError(err)
		}
		return nil, fmt.Errorf("read job file: %w", err)
	}
	return Parse(path, src)
}

// ParseRequest handles the body of POST /v1/jobs/parse: it parses
// req.JobHCL with the variable values of req.Variables (a variable file's
// content) and req.VarFlags (-var pairs, which win). Canonicalize is
// ignored: the server fills in defaults when the job is registered. Every
// error it returns is a problem with the request (HTTP 400).
func ParseRequest(req *api.JobsParseRequest) (*api.Job, error) {
	if req == nil || strings.TrimSpace(req.JobHCL) == "" {
		return nil, &Error{Summary: "Missing job", Detail: "JobHCL is empty; send the job file's content."}
	}
	if req.HCLv1 {
		return nil, &Error{Summary: "HCL1 is not supported", Detail: "drover reads HCL2 job files only; set HCLv1 to false."}
	}
	// As Nomad's: a job without a group parses here, and is refused when
	// registered (a UI's editor parses drafts).
	in := inputs{flags: req.VarFlags, groupless: true}
	if req.Variables != "" {
		in.files = []VarFile{{Name: "variables.hcl", Content: []byte(req.Variables)}}
	}
	return parse("job.nomad.hcl", []byte(req.JobHCL), in)
}

// Options are the values a job file's variables take from outside it, as
// `drover job run|plan|validate` gathers them. Later sources win: Env,
// then VarFiles in order, then Vars.
type Options struct {
	// Env holds the values of NOMAD_VAR_<name> environment variables, by
	// name (without the prefix); names the file does not declare are
	// ignored. EnvVars extracts them from an environment.
	Env map[string]string
	// VarFiles are the -var-file files: HCL, or JSON when the name ends
	// in ".json".
	VarFiles []VarFile
	// Vars are the -var name=value pairs.
	Vars map[string]string
	// AllowFS enables the functions that read local files (file,
	// fileexists): for the CLI, never for a server parsing a request.
	AllowFS bool
}

// ParseWithOptions is Parse with variable values from outside the file.
func ParseWithOptions(filename string, src []byte, opts Options) (*api.Job, error) {
	return parse(filename, src, inputs{env: opts.Env, files: opts.VarFiles, flags: opts.Vars, fs: opts.AllowFS})
}

// EnvVarPrefix starts the names of the environment variables that give
// job file variables their values (NOMAD_VAR_image=redis:7), as in Nomad.
const EnvVarPrefix = "NOMAD_VAR_"

// EnvVars returns the job file variable values of environ ("K=V" entries,
// as os.Environ returns), by variable name.
func EnvVars(environ []string) map[string]string {
	out := map[string]string{}
	for _, kv := range environ {
		k, v, ok := strings.Cut(kv, "=")
		if ok && strings.HasPrefix(k, EnvVarPrefix) && len(k) > len(EnvVarPrefix) {
			out[strings.TrimPrefix(k, EnvVarPrefix)] = v
		}
	}
	return out
}

// parse is Parse with variable values from outside the file. The file is
// checked against the limits of package inputlimit before it is parsed.
func parse(filename string, src []byte, in inputs) (*api.Job, error) {
	json := isJSON(filename, src)
	if err := checkSource(filename, src, json); err != nil {
		return nil, err
	}
	if json {
		return parseJSON(filename, src)
	}
	file, diags := hclsyntax.ParseConfig(src, filename, hcl.InitialPos)
	if diags.HasErrors() {
		return nil, diagsError(filename, diags)
	}
	b := newBudget()
	d := &decoder{
		src: src,
		ctx: &hcl.EvalContext{
			Variables: map[string]cty.Value{"var": cty.EmptyObjectVal, "local": cty.EmptyObjectVal},
			Functions: meterFunctions(functions(in.fs), b),
		},
		budget:    b,
		groupless: in.groupless,
	}
	c := d.content(file.Body, nil,
		hcl.BlockHeaderSchema{Type: "job", LabelNames: []string{"id"}},
		hcl.BlockHeaderSchema{Type: "variable", LabelNames: []string{"name"}},
		hcl.BlockHeaderSchema{Type: "variables"},
		hcl.BlockHeaderSchema{Type: "locals"},
	)
	d.ctx.Variables["var"] = d.variables(c, in)
	d.ctx.Variables["local"] = d.locals(c)

	var job *api.Job
	jobs := blocksOf(c, "job")
	switch {
	case len(jobs) == 0:
		if !d.diags.HasErrors() {
			d.add(errorAt(hcl.Range{Filename: filename, Start: hcl.InitialPos, End: hcl.InitialPos},
				"Missing job block", "A job file needs one job \"ID\" { ... } block."))
		}
	case len(jobs) > 1:
		d.errorf(jobs[1].DefRange, "Duplicate job block",
			"A job file holds exactly one job; another was defined at %s.", lineCol1(jobs[0].DefRange))
	default:
		jb := *jobs[0]
		if body, ok := jb.Body.(*hclsyntax.Body); ok {
			jb.Body = (&dynamicExpander{d: d}).body(body, nil)
		}
		job = d.job(&jb)
	}
	if b.spent != nil && !d.diags.HasErrors() {
		d.add(b.diag(*b.spent)) // only try() or can() saw it
	}
	if err := diagsError(filename, d.diags); err != nil {
		return nil, err
	}
	return job, nil
}

// isJSON reports whether a job file is JSON rather than HCL.
func isJSON(filename string, src []byte) bool {
	return strings.HasSuffix(filename, ".json") || bytes.HasPrefix(bytes.TrimSpace(src), []byte("{"))
}
