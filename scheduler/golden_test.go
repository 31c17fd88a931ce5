package scheduler

import (
	"cmp"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/drover-io/drover/structs"
)

var rewrite = flag.Bool("rewrite", false, "rewrite the expected output in testdata/*.txt")

// scriptCase is one trace: input commands, then "----", then the plan
// rendered by renderPlan, ended by a blank line.
type scriptCase struct {
	line   int
	input  []string
	output string
}

func parseScript(t *testing.T, text string) []*scriptCase {
	t.Helper()
	var cases []*scriptCase
	var cur *scriptCase
	inOutput := false
	for i, l := range strings.Split(text, "\n") {
		switch {
		case inOutput && l == "":
			inOutput, cur = false, nil
		case inOutput:
			cur.output += l + "\n"
		case l == "----":
			if cur == nil {
				t.Fatalf("line %d: ---- without input", i+1)
			}
			inOutput = true
		case l == "" || strings.HasPrefix(l, "#"):
		default:
			if cur == nil {
				cur = &scriptCase{line: i + 1}
				cases = append(cases, cur)
			}
			cur.input = append(cur.input, l)
		}
	}
	return cases
}

// runScript builds the state a case describes and processes its eval.
//
//	node <id> [cpu=N] [mem=N] [dc=D] [class=C] [pool=P] [status=S] [drain=true]
//	          [eligible=false] [drivers=a,b] [unhealthy=a] [attr.K=V] [meta.K=V]
//	          [reserved_cpu=N] [reserved_mem=N]
//	job <id> [type=T] [count=N] [cpu=N] [mem=N] [dc=a,b] [pool=P] [version=N] [stop=true]
//	         [purged=true] [driver=D]
//	group <name> [count=N] [cpu=N] [mem=N]      (replaces the default group)
//	constraint job|group|task <ltarget> <op> [rtarget]
//	affinity job|group|task <ltarget> <op> <rtarget> [weight=N]
//	spread job|group <attribute> [weight=N] [target=VALUE:PERCENT,...]
//	tally <attribute>                         (also print the placements per value)
//	alloc <id> node=<n> [group=G] [index=N] [client=S] [desired=S] [version=N [changed=true]]
//	other <id> node=<n> [cpu=N] [mem=N] [priority=N] (an allocation of another job)
//	config preempt=service,batch,system|none    (scheduler configuration)
//	update [max_parallel=N] [auto_revert=true] [canary=N] [auto_promote=true]
//	                                             (the last group's update block)
//	deployment <id> [status=S] [version=N] [canaries=ID,...] [desired_canaries=N]
//	           [promoted=true] [auto_promote=true|GROUP] [auto_revert=true]
//	                                             (the job's latest deployment, for version N;
//	                                              canaries: each group's placed canaries,
//	                                              group/ID for one group's)
//	annotations                                  (also print the per-group counts)
//	reschedule [attempts=N] [interval=D] [delay=D] [fn=F] [max=D] [unlimited=true]
//	                                             (the last group's policy; "reschedule none" removes it)
//	eval [trigger=T] [id=ID]
//
// job also takes [priority=N] [meta.K=V]; alloc also takes [dep=ID]
// [canary=true] [healthy=true|false] [inplace=true] (with version=N: only the count
// differs) and [meta.K=V] (the old version's job meta); for rescheduling
// [failed=D] (failed D before now), [tracker=node:ago:delay,...] (earlier
// reschedules), [next=ID] and [followup=EVAL].
func runScript(input []string) (string, error) {
	st := newFakeState()
	var job *structs.Job
	purged := false
	customGroups := false
	eval := &structs.Evaluation{ID: "eval-1", TriggeredBy: structs.EvalTriggerJobRegister, Status: structs.EvalStatusPending}
	annotations := false
	var tallies []string
	for _, line := range input {
		f := strings.Fields(line)
		kv := map[string]string{}
		for _, a := range f[1:] {
			if k, v, ok := strings.Cut(a, "="); ok {
				kv[k] = v
			}
		}
		switch f[0] {
		case "node":
			n := newNode(f[1])
			for k, v := range kv {
				switch {
				case k == "cpu":
					n.NodeResources.Cpu.CpuShares = int64(atoi(v))
				case k == "mem":
					n.NodeResources.Memory.MemoryMB = int64(atoi(v))
				case k == "reserved_cpu" || k == "reserved_mem":
					if n.ReservedResources == nil {
						n.ReservedResources = &structs.NodeReservedResources{}
					}
					if k == "reserved_cpu" {
						n.ReservedResources.Cpu.CpuShares = uint64(atoi(v))
					} else {
						n.ReservedResources.Memory.MemoryMB = uint64(atoi(v))
					}
				case k == "dc":
					n.Datacenter = v
				case k == "class":
					n.NodeClass = v
				case k == "pool":
					n.NodePool = v
				case k == "status":
					n.Status = v
				case k == "drain":
					n.Drain = v == "true"
				case k == "eligible" && v == "false":
					n.SchedulingEligibility = structs.NodeSchedulingIneligible
				case k == "drivers":
					n.Drivers = map[string]*structs.DriverInfo{}
					for _, d := range strings.Split(v, ",") {
						if d != "" {
							n.Drivers[d] = &structs.DriverInfo{Detected: true, Healthy: true}
						}
					}
				case k == "unhealthy":
					n.Drivers[v] = &structs.DriverInfo{Detected: true, Healthy: false}
				case strings.HasPrefix(k, "attr."):
					n.Attributes[k[5:]] = v
				case strings.HasPrefix(k, "meta."):
					n.Meta[k[5:]] = v
				default:
					return "", fmt.Errorf("node: unknown key %q", k)
				}
			}
			st.nodes = append(st.nodes, n)
		case "job":
			typ := kv["type"]
			if typ == "" {
				typ = structs.JobTypeService
			}
			count, cpu, mem := 1, 100, 256
			if v, ok := kv["count"]; ok {
				count = atoi(v)
			}
			if v, ok := kv["cpu"]; ok {
				cpu = atoi(v)
			}
			if v, ok := kv["mem"]; ok {
				mem = atoi(v)
			}
			job = newJob(f[1], typ, count, cpu, mem)
			if v, ok := kv["dc"]; ok {
				job.Datacenters = strings.Split(v, ",")
			}
			if v, ok := kv["version"]; ok {
				job.JobModifyIndex = uint64(atoi(v))
			}
			job.NodePool = kv["pool"]
			if v, ok := kv["driver"]; ok {
				job.TaskGroups[0].Tasks[0].Driver = v
			}
			if v, ok := kv["priority"]; ok {
				job.Priority = atoi(v)
			}
			for k, v := range kv {
				if mk, ok := strings.CutPrefix(k, "meta."); ok {
					if job.Meta == nil {
						job.Meta = map[string]string{}
					}
					job.Meta[mk] = v
				}
			}
			job.Stop = kv["stop"] == "true"
			if v, ok := kv["periodic"]; ok {
				job.Periodic = &structs.PeriodicConfig{Enabled: true, Spec: v}
			}
			purged = kv["purged"] == "true"
		case "group":
			if !customGroups {
				job.TaskGroups = nil
				customGroups = true
			}
			g := newJob(job.ID, job.Type, 1, 100, 256).TaskGroups[0]
			g.Name = f[1]
			if v, ok := kv["count"]; ok {
				g.Count = atoi(v)
			}
			if v, ok := kv["cpu"]; ok {
				g.Tasks[0].Resources.CPU = atoi(v)
			}
			if v, ok := kv["mem"]; ok {
				g.Tasks[0].Resources.MemoryMB = atoi(v)
			}
			job.TaskGroups = append(job.TaskGroups, g)
		case "constraint":
			c := &structs.Constraint{LTarget: f[2], Operand: f[3]}
			if len(f) > 4 {
				c.RTarget = strings.Join(f[4:], " ")
			}
			tg := job.TaskGroups[len(job.TaskGroups)-1]
			switch f[1] {
			case "job":
				job.Constraints = append(job.Constraints, c)
			case "group":
				tg.Constraints = append(tg.Constraints, c)
			case "task":
				tg.Tasks[0].Constraints = append(tg.Tasks[0].Constraints, c)
			}
		case "affinity":
			a := &structs.Affinity{LTarget: f[2], Operand: f[3], RTarget: f[4], Weight: structs.DefaultPlacementWeight}
			if v, ok := kv["weight"]; ok {
				a.Weight = atoi(v)
			}
			tg := job.TaskGroups[len(job.TaskGroups)-1]
			switch f[1] {
			case "job":
				job.Affinities = append(job.Affinities, a)
			case "group":
				tg.Affinities = append(tg.Affinities, a)
			case "task":
				tg.Tasks[0].Affinities = append(tg.Tasks[0].Affinities, a)
			}
		case "spread":
			sp := &structs.Spread{Attribute: f[2], Weight: structs.DefaultPlacementWeight}
			if v, ok := kv["weight"]; ok {
				sp.Weight = atoi(v)
			}
			if v, ok := kv["target"]; ok {
				for _, t := range strings.Split(v, ",") {
					val, pct, _ := strings.Cut(t, ":")
					sp.SpreadTarget = append(sp.SpreadTarget, &structs.SpreadTarget{Value: val, Percent: atoi(pct)})
				}
			}
			if f[1] == "job" {
				job.Spreads = append(job.Spreads, sp)
			} else {
				tg := job.TaskGroups[len(job.TaskGroups)-1]
				tg.Spreads = append(tg.Spreads, sp)
			}
		case "tally":
			tallies = append(tallies, f[1])
		case "alloc":
			group := kv["group"]
			if group == "" {
				group = job.TaskGroups[0].Name
			}
			idx := 0
			if v, ok := kv["index"]; ok {
				idx = atoi(v)
			}
			client := kv["client"]
			if client == "" {
				client = structs.AllocClientStatusRunning
			}
			aj := job
			if v, ok := kv["version"]; ok {
				aj = job.Copy()
				aj.JobModifyIndex = uint64(atoi(v))
				if kv["changed"] == "true" {
					for _, g := range aj.TaskGroups {
						g.Tasks[0].Env = map[string]string{"OLD": "1"}
					}
				}
				if kv["services"] == "true" {
					// Only a service block differs: an in-place update
					// that changes what decides the alloc's health.
					for _, g := range aj.TaskGroups {
						g.Services = []*structs.Service{{Name: "web", Provider: structs.ServiceProviderNomad, Tags: []string{"old"}}}
					}
				}
				if kv["inplace"] == "true" {
					for _, g := range aj.TaskGroups {
						g.Count++
					}
					aj.Priority = 30
				}
				for k, v := range kv {
					if mk, ok := strings.CutPrefix(k, "meta."); ok {
						aj.Meta = map[string]string{mk: v}
					}
				}
			}
			a := newAlloc(f[1], aj, group, idx, kv["node"], client)
			a.DeploymentID = kv["dep"]
			if v, ok := kv["healthy"]; ok {
				h := v == "true"
				a.DeploymentStatus = &structs.AllocDeploymentStatus{Healthy: &h}
			}
			if v, ok := kv["desired"]; ok {
				a.DesiredStatus = v
			}
			if kv["canary"] == "true" {
				if a.DeploymentStatus == nil {
					a.DeploymentStatus = &structs.AllocDeploymentStatus{}
				}
				a.DeploymentStatus.Canary = true
			}
			if err := rescheduleAllocOptions(a, kv); err != nil {
				return "", err
			}
			a.CreateIndex = uint64(len(st.allocs) + 1)
			st.allocs = append(st.allocs, a)
		case "reschedule":
			p, err := parseReschedule(kv)
			if err != nil {
				return "", err
			}
			job.TaskGroups[len(job.TaskGroups)-1].ReschedulePolicy = p
		case "other":
			oj := newJob("other-"+f[1], structs.JobTypeService, 1, 100, 100)
			a := newAlloc(f[1], oj, "web", 0, kv["node"], structs.AllocClientStatusRunning)
			if v, ok := kv["cpu"]; ok {
				a.Resources.CPU = atoi(v)
			}
			if v, ok := kv["mem"]; ok {
				a.Resources.MemoryMB = atoi(v)
			}
			if v, ok := kv["priority"]; ok {
				oj.Priority = atoi(v)
			}
			a.CreateIndex = uint64(len(st.allocs) + 1)
			st.allocs = append(st.allocs, a)
		case "config":
			st.config = &structs.SchedulerConfiguration{}
			for _, t := range strings.Split(kv["preempt"], ",") {
				switch t {
				case "service":
					st.config.PreemptionConfig.ServiceSchedulerEnabled = true
				case "batch":
					st.config.PreemptionConfig.BatchSchedulerEnabled = true
				case "system":
					st.config.PreemptionConfig.SystemSchedulerEnabled = true
				}
			}
		case "update":
			u := structs.DefaultUpdateStrategy()
			if v, ok := kv["max_parallel"]; ok {
				u.MaxParallel = atoi(v)
			}
			u.AutoRevert = kv["auto_revert"] == "true"
			u.AutoPromote = kv["auto_promote"] == "true"
			if v, ok := kv["canary"]; ok {
				u.Canary = atoi(v)
			}
			job.TaskGroups[len(job.TaskGroups)-1].Update = u
		case "deployment":
			d := &structs.Deployment{ID: f[1], Namespace: job.Namespace, JobID: job.ID,
				JobSpecModifyIndex: job.JobModifyIndex, Status: structs.DeploymentStatusRunning, StatusDescription: DescDeploymentRunning,
				CreateIndex: uint64(len(st.deployments) + 1), TaskGroups: map[string]*structs.DeploymentState{}}
			if v, ok := kv["status"]; ok {
				d.Status = v
			}
			if v, ok := kv["version"]; ok {
				d.JobSpecModifyIndex = uint64(atoi(v))
			}
			for _, g := range job.TaskGroups {
				gs := &structs.DeploymentState{DesiredTotal: g.Count, Promoted: kv["promoted"] == "true",
					AutoPromote: kv["auto_promote"] == "true" || kv["auto_promote"] == g.Name, AutoRevert: kv["auto_revert"] == "true"}
				if v, ok := kv["canaries"]; ok {
					for _, id := range strings.Split(v, ",") {
						if grp, cid, ok := strings.Cut(id, "/"); !ok || grp == g.Name {
							gs.PlacedCanaries = append(gs.PlacedCanaries, cmp.Or(cid, id))
						}
					}
					gs.DesiredCanaries = len(gs.PlacedCanaries)
				}
				if v, ok := kv["desired_canaries"]; ok {
					gs.DesiredCanaries = atoi(v)
				}
				d.TaskGroups[g.Name] = gs
			}
			st.deployments = append(st.deployments, d)
		case "annotations":
			annotations = true
		case "eval":
			if v, ok := kv["trigger"]; ok {
				eval.TriggeredBy = v
			}
			if v, ok := kv["id"]; ok {
				eval.ID = v
			}
		default:
			return "", fmt.Errorf("unknown command %q", f[0])
		}
	}
	if job == nil {
		return "", fmt.Errorf("no job")
	}
	eval.Namespace, eval.JobID, eval.Type = job.Namespace, job.ID, job.Type
	if !purged {
		st.jobs[job.NamespacedID()] = job
	}
	plan, err := testOptions().Process(st, eval)
	if err != nil {
		return "error: " + err.Error() + "\n", nil
	}
	out := renderPlan(plan)
	if annotations {
		out += renderAnnotations(plan)
	}
	for _, attr := range tallies {
		out += renderTally(st, plan, attr)
	}
	return out, nil
}

// TestScripts runs the traces in testdata/*.txt. Run with -rewrite to
// regenerate their expected output after an intended change.
func TestScripts(t *testing.T) {
	files, err := filepath.Glob("testdata/*.txt")
	if err != nil || len(files) == 0 {
		t.Fatalf("no testdata: %v", err)
	}
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			raw, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			text := string(raw)
			cases := parseScript(t, text)
			for _, c := range cases {
				got, err := runScript(c.input)
				if err != nil {
					t.Fatalf("%s:%d: %v", file, c.line, err)
				}
				if *rewrite {
					c.output = got
					continue
				}
				if got != c.output {
					t.Errorf("%s:%d: plan differs\n--- got\n%s--- want\n%s", file, c.line, got, c.output)
				}
			}
			if *rewrite {
				if err := os.WriteFile(file, []byte(rewriteOutputs(text, cases)), 0o644); err != nil {
					t.Fatal(err)
				}
			}
		})
	}
}

// rewriteOutputs replaces the output of each case in text, keeping
// everything else (comments, inputs) as it is.
func rewriteOutputs(text string, cases []*scriptCase) string {
	var b strings.Builder
	lines := strings.Split(text, "\n")
	ci := -1
	inOutput := false
	for i := 0; i < len(lines); i++ {
		l := lines[i]
		switch {
		case inOutput && l == "":
			inOutput = false
			b.WriteString("\n")
		case inOutput:
			// dropped: replaced by the new output
		case l == "----":
			ci++
			b.WriteString("----\n" + cases[ci].output)
			inOutput = true
		default:
			b.WriteString(l)
			if i < len(lines)-1 {
				b.WriteString("\n")
			}
		}
	}
	return b.String()
}
