// Package jobspec parses job files, in Nomad's HCL2 job specification
// format or in the JSON form of Nomad's API, into *api.Job values.
//
// It sits at the very start of the data flow: the CLI (`drover job run`)
// and the HTTP endpoint POST /v1/jobs/parse turn a file into an api.Job
// here, and the result is then submitted with PUT /v1/jobs, where the
// server converts it to structs.Job, fills in defaults and validates it.
// The package does no I/O besides ParseFile reading its file, and starts no
// goroutines.
//
// The placement blocks, affinity (job, group, task) and spread (job,
// group), decode into typed fields (placement.go), with their weights,
// percents, operators and attributes checked where they are written.
//
// # Interpolation
//
// References that are resolved later, by the scheduler or the client
// (${attr.kernel.name}, ${node.datacenter}, ${meta.foo}, ${NOMAD_ALLOC_ID},
// ${env["X"]}), are kept literally as strings: every reference whose root
// is not `var` or `local` is replaced by its own text in "${...}" before
// HCL evaluates the expression. `variable` blocks (with type, default and
// values from ParseRequest's variable file and -var flags), `variables`
// blocks, `locals` blocks and the usual HCL functions are evaluated at
// parse time. A string that is a single interpolation of a number or bool
// ("${local.port}") stays a string.
//
// Variables take their values, later sources winning, from their default,
// NOMAD_VAR_<name> environment variables, variable files (HCL, or JSON when
// the name ends in ".json") and -var flags (ParseWithOptions); a variable's
// validation blocks are checked against the final value. The functions are
// go-cty's standard library plus encodings, hashes, uuidv4 and timestamp
// (functions_more.go); file and fileexists only where Options.AllowFS (the
// CLI), never for POST /v1/jobs/parse. `dynamic` blocks are expanded on the
// syntax tree before decoding (dynamic.go), anywhere in the job block,
// driver config blocks included.
//
// # Features drover does not implement yet
//
// Blocks of Nomad features that leave a job's meaning intact when ignored
// by the current scheduler and client, or that later changes will
// implement, are decoded into the matching json.RawMessage fields of
// api.Job, in the JSON shape of Nomad's API: update, reschedule, migrate,
// ui (job); network, service (with check, check_restart,
// identity, weights), volume, scaling (turned into scaling policies by
// the agent), consul, disconnect, shutdown_delay,
// max_client_disconnect, stop_after_client_disconnect,
// prevent_reschedule_on_lost (group); artifact, template, volume_mount,
// vault, consul, identity, service, shutdown_delay, kind, scaling "cpu"|"mem"
// (task);
// network, device, numa, iops, secrets (resources); render_templates
// (restart). The agent decides whether to reject or warn about them. The
// update and a group's network blocks go through the same decoding and are
// then unmarshalled into their typed fields (api.UpdateStrategy,
// api.NetworkResource).
//
// Blocks that change what a job is, and would silently run something else
// if dropped, are errors "X is not supported by drover yet": multiregion
// (job); csi_plugin, action, schedule, secret (task); connect (service).
//
// The periodic and parameterized (job) and dispatch_payload (task) blocks
// decode into typed fields (periodic.go); cron expressions and time zones
// are checked where they are written.
//
// A task's driver `config` (and a scaling `policy`) is free-form: values
// keep their types, and nested blocks become lists of maps under their
// type (`mount { ... }` -> "mount": [{...}]), one more level per label.
//
// Not supported either: HCL1 job files, job files in HCL's JSON syntax
// (JSON is read as Nomad's API form), and the deprecated job arguments
// vault_token and consul_token.
//
// # Limits
//
// Job files come from strangers (POST /v1/jobs/parse needs no token), so
// a file, a variable file and each -var value are checked before parsing
// against the size and nesting limits of package inputlimit, and the
// evaluation of expressions is metered: once they have computed more than
// MaxEvalBytes (strings built, function results, for-expression
// iterations), the parse stops with an error (budget.go). The limits are
// listed in docs/security.md.
//
// # Errors
//
// Every problem is an *Error with the file, line and column where it is,
// formatted "file:line:col: summary: detail"; several problems are joined
// with errors.Join. All are the user's to fix (HTTP 400).
package jobspec
