package command

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"time"

	"github.com/drover-io/drover/drivers/shared/isolation"
	"github.com/drover-io/drover/drivers/shared/shim"
	"github.com/drover-io/drover/version"
)

// Version is drover's version (version.Version).
const Version = version.Version

// cliCommand is one command of the CLI.
type cliCommand struct {
	// synopsis is the one-line description shown in command lists.
	synopsis string
	// run executes the command with its arguments (after its name).
	run func(m *Meta, args []string) int
}

// commands returns the CLI's commands by their full name. A name with
// subcommands ("job") is listed with them; running it alone prints them.
func commands() map[string]cliCommand {
	return map[string]cliCommand{
		"agent":                         {"Run a drover agent (server, client, or both)", runAgent},
		"job":                           {"Interact with jobs", nil},
		"job init":                      {"Create an example job file", runJobInit},
		"job run":                       {"Run a new job or update an existing one", runJobRun},
		"job status":                    {"Display the status of jobs", runJobStatus},
		"job stop":                      {"Stop a running job", runJobStop},
		"job eval":                      {"Create a new evaluation of a job (force evaluation)", runJobEval},
		"job inspect":                   {"Show the job as the server stores it (JSON)", runJobInspect},
		"job plan":                      {"Show what running a job file would change (dry run)", runJobPlan},
		"job validate":                  {"Check a job file without running it", runJobValidate},
		"job history":                   {"List the kept versions of a job", runJobHistory},
		"job revert":                    {"Revert a job to an earlier version", runJobRevert},
		"job scale":                     {"Change the count of a job's task group", runJobScale},
		"job scaling-events":            {"List the scaling events of a job", runJobScalingEvents},
		"job allocs":                    {"List the allocations of a job", runJobAllocs},
		"job restart":                   {"Restart the allocations of a job, batch by batch", runJobRestart},
		"job tag":                       {"Tag versions of a job", nil},
		"job tag apply":                 {"Tag a version of a job with a name", runJobTagApply},
		"job tag unset":                 {"Remove a tag from a version of a job", runJobTagUnset},
		"job periodic":                  {"Interact with periodic jobs", nil},
		"job periodic force":            {"Launch a periodic job now", runJobPeriodicForce}, // job_periodic.go
		"job dispatch":                  {"Dispatch an instance of a parameterized job", runJobDispatch},
		"deployment":                    {"Interact with deployments (rolling updates)", nil},
		"deployment list":               {"List deployments", runDeploymentList},
		"deployment status":             {"Display the status of a deployment", runDeploymentStatus},
		"deployment fail":               {"Mark a deployment failed (auto_revert applies)", runDeploymentFail},
		"deployment pause":              {"Pause a deployment: no new batches until resumed", runDeploymentPause},
		"deployment resume":             {"Resume a paused deployment", runDeploymentResume},
		"deployment promote":            {"Promote a deployment's canaries", runDeploymentPromote},
		"operator":                      {"Cluster operator commands", nil},
		"operator root":                 {"Manage the keyring of root keys that encrypt variables", nil},
		"operator root keyring":         {"List, rotate or remove the keyring's root keys", nil},
		"operator root keyring list":    {"List the root keys", runKeyringList},
		"operator root keyring rotate":  {"Make a new active root key (-full: encrypt every variable again)", runKeyringRotate},
		"operator root keyring remove":  {"Remove an inactive root key", runKeyringRemove},
		"operator debug":                {"Collect the agent's logs, profiles and the cluster's state into a bundle", runOperatorDebug},
		"operator scheduler":            {"Read or change the scheduler configuration", nil},
		"operator scheduler get-config": {"Show the scheduler configuration", runOperatorSchedulerGetConfig},
		"operator scheduler set-config": {"Change the scheduler configuration (preemption per job type)", runOperatorSchedulerSetConfig},
		"operator raft":                 {"Read or change the raft configuration of the servers", nil},
		"operator raft list-peers":      {"List the servers of the raft configuration", runOperatorRaftListPeers},
		"operator raft remove-peer":     {"Remove a server from the raft configuration", runOperatorRaftRemovePeer},
		"operator snapshot":             {"Save, restore or inspect snapshots of the cluster state", nil},
		"operator snapshot save":        {"Save the cluster state to a file", runOperatorSnapshotSave},
		"operator snapshot restore":     {"Replace the cluster state with a snapshot file's", runOperatorSnapshotRestore},
		"operator snapshot inspect":     {"Describe a snapshot file", runOperatorSnapshotInspect},
		"operator autopilot":            {"Read or change autopilot (dead-server cleanup, server health)", nil},
		"operator autopilot get-config": {"Show the autopilot configuration", runOperatorAutopilotGetConfig},
		"operator autopilot set-config": {"Change the autopilot configuration", runOperatorAutopilotSetConfig},
		"operator autopilot health":     {"Show the servers' health", runOperatorAutopilotHealth},
		"server":                        {"Interact with the servers of the cluster", nil},
		"server members":                {"List the servers of the cluster", runServerMembers},
		"server join":                   {"Make the agent's server join other servers", runServerJoin},
		"server force-leave":            {"Make the cluster forget a failed server", runServerForceLeave},
		"alloc":                         {"Interact with allocations", nil},
		"alloc status":                  {"Display the status of an allocation", runAllocStatus},
		"alloc logs":                    {"Print or follow the logs of a task of an allocation", runAllocLogs},
		"alloc fs":                      {"List or print the files of an allocation's directory", runAllocFS},
		"alloc restart":                 {"Restart the tasks of a running allocation in place", runAllocRestart},
		"alloc signal":                  {"Send a signal to the tasks of an allocation", runAllocSignal},
		"alloc stop":                    {"Stop an allocation; the scheduler replaces it", runAllocStop},
		"alloc exec":                    {"Run a command inside a running task and attach to it", runAllocExec},
		"system":                        {"Interact with the system API", nil},
		"system gc":                     {"Garbage collect dead jobs, evaluations, allocations and down nodes now", runSystemGC},
		"system reconcile":              {"Reconcile the servers' state", nil},
		"system reconcile summaries":    {"Recompute every job's summary", runSystemReconcileSummaries},
		"acl":                           {"Interact with ACL policies, tokens, roles, auth methods and binding rules", nil},
		"acl bootstrap":                 {"Bootstrap the ACL system for initial token", runACLBootstrap},
		"acl policy":                    {"Interact with ACL policies", nil},
		"acl policy apply":              {"Create or update an ACL policy", runACLPolicyApply},
		"acl policy list":               {"List ACL policies", runACLPolicyList},
		"acl policy info":               {"Fetch info on an existing ACL policy", runACLPolicyInfo},
		"acl policy delete":             {"Delete an existing ACL policy", runACLPolicyDelete},
		"acl token":                     {"Interact with ACL tokens", nil},
		"acl token create":              {"Create a new ACL token", runACLTokenCreate},
		"acl token list":                {"List ACL tokens", runACLTokenList},
		"acl token info":                {"Fetch information on an existing ACL token", runACLTokenInfo},
		"acl token update":              {"Update an existing ACL token", runACLTokenUpdate},
		"acl token delete":              {"Delete an existing ACL token", runACLTokenDelete},
		"acl token self":                {"Lookup self ACL token", runACLTokenSelf},
		"acl role":                      {"Interact with ACL roles", nil},
		"acl role create":               {"Create a new ACL role", runACLRoleCreate},
		"acl role list":                 {"List ACL roles", runACLRoleList},
		"acl role info":                 {"Fetch information on an existing ACL role", runACLRoleInfo},
		"acl role update":               {"Update an existing ACL role", runACLRoleUpdate},
		"acl role delete":               {"Delete an existing ACL role", runACLRoleDelete},
		"namespace":                     {"Interact with namespaces", nil},
		"namespace list":                {"List namespaces", runNamespaceList},
		"namespace status":              {"Display a namespace", runNamespaceStatus},
		"namespace apply":               {"Create or update a namespace", runNamespaceApply},
		"namespace delete":              {"Delete a namespace", runNamespaceDelete},
		"node":                          {"Interact with nodes", nil},
		"node status":                   {"Display the status of nodes", runNodeStatus},
		"node drain":                    {"Start or stop a node's drain (its allocations move to other nodes)", runNodeDrain},
		"node eligibility":              {"Make a node eligible or ineligible for new allocations", runNodeEligibility},
		"node meta":                     {"Interact with a node's metadata", nil},
		"node meta apply":               {"Set or unset a node's dynamic metadata", runNodeMetaApply},
		"node meta read":                {"Show a node's metadata", runNodeMetaRead},
		"node pool":                     {"Interact with node pools", nil},
		"node pool list":                {"List node pools", runNodePoolList},
		"node pool info":                {"Display a node pool and its nodes", runNodePoolInfo},
		"node pool apply":               {"Create or update a node pool", runNodePoolApply},
		"node pool delete":              {"Delete a node pool", runNodePoolDelete},
		"service":                       {"Interact with Nomad native service registrations", nil},
		"service list":                  {"List the registered services and their tags", runServiceList},
		"service info":                  {"Show the registered instances of a service", runServiceInfo},
		"service delete":                {"Delete one registered instance of a service", runServiceDelete},
		"status":                        {"Display the status of jobs, or of the job, allocation or node an ID prefix names", runStatus},
		"var":                           {"Interact with variables (encrypted key/value items)", nil},
		"var put":                       {"Create or update a variable", runVarPut},
		"var get":                       {"Show a variable", runVarGet},
		"var list":                      {"List variables", runVarList},
		"var purge":                     {"Delete a variable", runVarPurge},
		"version":                       {"Print drover's version", runVersion},
		"tls":                           {"Create a CA and certificates for TLS between agents and the CLI", nil},
		"tls ca":                        {"Manage the certificate authority", nil},
		"tls ca create":                 {"Create a CA (nomad-agent-ca.pem and its key)", runTLSCACreate},
		"tls cert":                      {"Manage certificates", nil},
		"tls cert create":               {"Create a server, client or CLI certificate signed by the CA", runTLSCertCreate},
		"monitor":                       {"Stream the agent's log lines", runMonitor},
		"agent-info":                    {"Show the agent's statistics", runAgentInfo},
		"event":                         {"Interact with the event stream", nil},
		"event stream":                  {"Print the event stream (jobs, allocations, evaluations, deployments, nodes) as it happens", runEventStream},

		// Logins and own policies (acl_auth.go).
		"acl policy self":         {"Lookup the policies of the current token", runACLPolicySelf},
		"acl auth-method":         {"Interact with ACL auth methods", nil},
		"acl auth-method create":  {"Create a new ACL auth method", runACLAuthMethodCreate},
		"acl auth-method list":    {"List ACL auth methods", runACLAuthMethodList},
		"acl auth-method info":    {"Fetch information on an existing ACL auth method", runACLAuthMethodInfo},
		"acl auth-method update":  {"Update an existing ACL auth method", runACLAuthMethodUpdate},
		"acl auth-method delete":  {"Delete an existing ACL auth method", runACLAuthMethodDelete},
		"acl binding-rule":        {"Interact with ACL binding rules", nil},
		"acl binding-rule create": {"Create a new ACL binding rule", runACLBindingRuleCreate},
		"acl binding-rule list":   {"List ACL binding rules", runACLBindingRuleList},
		"acl binding-rule info":   {"Fetch information on an existing ACL binding rule", runACLBindingRuleInfo},
		"acl binding-rule update": {"Update an existing ACL binding rule", runACLBindingRuleUpdate},
		"acl binding-rule delete": {"Delete an existing ACL binding rule", runACLBindingRuleDelete},
		"acl login":               {"Login to Drover using an auth method", runACLLogin},

		// The gossip keyring (operator_gossip.go).
		"operator gossip":                  {"Manage the servers' gossip (serf) encryption", nil},
		"operator gossip keyring":          {"Manage the gossip encryption keys (-list, -install, -use, -remove)", runGossipKeyring},
		"operator gossip keyring list":     {"List the gossip encryption keys", runGossipKeyringList},
		"operator gossip keyring install":  {"Install a gossip encryption key on every server", gossipKeyringOpCommand("install", "Install a gossip encryption key on every server (it does not encrypt until `use`).")},
		"operator gossip keyring use":      {"Make an installed gossip key the one that encrypts", gossipKeyringOpCommand("use", "Make an installed gossip key the one that encrypts, on every server.")},
		"operator gossip keyring remove":   {"Remove a gossip key that is not in use", gossipKeyringOpCommand("remove", "Remove a gossip key that is not in use from every server.")},
		"operator gossip keyring generate": {"Print a new gossip encryption key", runGossipKeyringGenerate},
		"operator keyring":                 {"Manage the gossip encryption keys (Nomad's older name of operator gossip keyring)", runOperatorKeyring},
	}
}

// Run runs the command line args (without the program name) and returns the
// process exit code: 0 on success, 1 on errors, 2 when `job run` could not
// place all allocations.
func Run(args []string, stdout, stderr io.Writer) int {
	// "drover shim" is a task shim started by a driver, not a CLI command.
	if code, ok := shim.RunIfShim(args); ok {
		return code
	}
	// "drover isolation-init" is the exec driver's init stage, started
	// by a shim in a task's new namespaces.
	if code, ok := isolation.RunIfInit(args); ok {
		return code
	}
	return run(args, newMeta(stdout, stderr, defaultDeps()))
}

// run is Run with the dependencies given, for tests.
func run(args []string, m *Meta) int {
	// Global flags before the command: -address, -namespace, -h, -version.
	global := flag.NewFlagSet("drover", flag.ContinueOnError)
	global.SetOutput(io.Discard)
	global.StringVar(&m.address, "address", m.address, "")
	global.StringVar(&m.namespace, "namespace", m.namespace, "")
	m.tls.register(global) // meta_tls.go
	global.StringVar(&m.token, "token", m.token, "")
	showVersion := global.Bool("version", false, "")
	if err := global.Parse(args); err != nil {
		if err == flag.ErrHelp {
			printMainHelp(m.stdout)
			return 0
		}
		fmt.Fprintf(m.stderr, "Error: %v\n\n", err)
		printMainHelp(m.stderr)
		return 1
	}
	if *showVersion {
		return runVersion(m, nil)
	}
	args = global.Args()
	if len(args) == 0 {
		printMainHelp(m.stderr)
		return 1
	}
	if args[0] == "help" {
		if len(args) == 1 {
			printMainHelp(m.stdout)
			return 0
		}
		// "drover help job run" is "drover job run -h".
		return run(append(args[1:], "-h"), m)
	}

	cmds := commands()
	name := args[0]
	rest := args[1:]
	if _, ok := cmds[name]; !ok {
		fmt.Fprintf(m.stderr, "Error: unknown command %q\n\n", name)
		printMainHelp(m.stderr)
		return 1
	}
	// Descend into subcommands: "job" "run" -> "job run", and further
	// ("operator scheduler get-config").
	for len(rest) > 0 && !strings.HasPrefix(rest[0], "-") {
		if _, ok := cmds[name+" "+rest[0]]; !ok {
			break
		}
		name, rest = name+" "+rest[0], rest[1:]
	}
	c := cmds[name]
	if c.run == nil {
		return runParent(m, name, rest, cmds)
	}
	return c.run(m, rest)
}

// runParent handles a command that only groups subcommands ("drover job").
func runParent(m *Meta, name string, args []string, cmds map[string]cliCommand) int {
	out, code := m.stderr, 1
	if len(args) > 0 && isHelpFlag(args[0]) {
		out, code = m.stdout, 0
	} else if len(args) > 0 {
		fmt.Fprintf(m.stderr, "Error: unknown command \"%s %s\"\n\n", name, args[0])
	}
	fmt.Fprintf(out, "Usage: drover %s <subcommand> [options] [args]\n\n", name)
	fmt.Fprintf(out, "  %s.\n\nSubcommands:\n", cmds[name].synopsis)
	printCommandList(out, cmds, name+" ")
	fmt.Fprintf(out, "\nRun `drover %s <subcommand> -h` for a subcommand's options.\n", name)
	return code
}

func isHelpFlag(s string) bool {
	switch s {
	case "-h", "-help", "--help", "help":
		return true
	}
	return false
}

func printMainHelp(w io.Writer) {
	fmt.Fprint(w, `Usage: drover [-address=<addr>] <command> [options] [args]

  Drover runs and schedules workloads. Its HTTP API and job files are
  compatible with Nomad's.

Commands:
`)
	printCommandList(w, commands(), "")
	fmt.Fprint(w, `
Global options (also accepted by every command that talks to an agent):
  -address=<addr>    The agent's HTTP address (env DROVER_ADDR or NOMAD_ADDR,
                     default http://127.0.0.1:4646).
  -namespace=<ns>    The namespace to use (env DROVER_NAMESPACE or NOMAD_NAMESPACE).
  -ca-cert, -ca-path, -client-cert, -client-key, -tls-server-name,
  -tls-skip-verify   HTTPS to an agent with tls { http = true } (env
                     NOMAD_CACERT, NOMAD_CAPATH, NOMAD_CLIENT_CERT,
                     NOMAD_CLIENT_KEY, NOMAD_TLS_SERVER_NAME,
                     NOMAD_SKIP_VERIFY; see docs/tls.md).
  -token=<secret>    The ACL token's secret ID (env DROVER_TOKEN or NOMAD_TOKEN).

Run `+"`drover <command> -h`"+` for a command's options.
`)
}

// printCommandList prints the commands whose name starts with prefix and has
// exactly one more word.
func printCommandList(w io.Writer, cmds map[string]cliCommand, prefix string) {
	var names []string
	for n := range cmds {
		rest, ok := strings.CutPrefix(n, prefix)
		if ok && rest != "" && !strings.Contains(rest, " ") {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(w, "  %-14s %s\n", strings.TrimPrefix(n, prefix), cmds[n].synopsis)
	}
}

// deps are what the commands call outside the HTTP API; tests replace them.
type deps struct {
	runAgent func(args []string, stdout, stderr io.Writer) int
	parseJob parseJobFunc
	// taskConfigs checks job files' task config blocks before they are
	// sent; nil checks none (the agent still does).
	taskConfigs taskConfigValidator
	now         func() time.Time
	getenv      func(string) string
	// environ lists the environment (NOMAD_VAR_<name> values of job
	// files' variables); nil is an empty environment.
	environ func() []string
	// sleep waits d or until ctx ends (job restart's -batch-wait); nil
	// does not wait.
	sleep    func(ctx context.Context, d time.Duration) error
	readFile func(string) ([]byte, error)
	// stdin is read by `var put` for "-" values and sent by alloc exec to
	// the command.
	stdin io.Reader
}

func defaultDeps() deps {
	return deps{
		runAgent:    agentRunCommand,
		parseJob:    jobspecParse,
		taskConfigs: builtinTaskConfigs(),
		now:         time.Now,
		getenv:      os.Getenv,
		environ:     os.Environ,
		sleep:       sleepContext,
		readFile:    os.ReadFile,
		stdin:       os.Stdin,
	}
}

// sleepContext waits d, or until ctx ends.
func sleepContext(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
