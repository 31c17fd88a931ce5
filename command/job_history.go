package command

import (
	"fmt"
	"strconv"
	"time"
)

func runJobHistory(m *Meta, args []string) int {
	fset := m.apiFlagSet("job history", "[options] <job>", `
List the kept versions of a job (the last 6), newest first: version,
whether it is stable (its deployment succeeded) and when it was submitted.
With -p, also the difference of each version from the one before it.`)
	diffs := fset.Bool("p", false, "Show the difference of each version from the previous one.")
	version := fset.Int("version", -1, "Show only this version.")
	if code, done := m.parse(fset, args); done {
		return code
	}
	if fset.NArg() != 1 {
		return m.usageError(fset, "this command takes one argument: the job ID")
	}
	c := m.apiClient()
	if c == nil {
		return exitError
	}
	jobID, code := m.resolveJob(c, fset.Arg(0), false)
	if jobID == "" {
		return code
	}
	versions, jobDiffs, _, err := c.Jobs().Versions(jobID, *diffs, nil)
	if err != nil {
		return m.fail(fmt.Sprintf("retrieving versions of job %q", jobID), err)
	}
	first := true
	for i, v := range versions {
		if *version >= 0 && (v.Version == nil || *v.Version != uint64(*version)) {
			continue
		}
		if !first {
			fmt.Fprintln(m.stdout)
		}
		first = false
		pairs := []kv{
			{"Version", strconv.FormatUint(derefUint(v.Version), 10)},
			{"Stable", strconv.FormatBool(v.Stable != nil && *v.Stable)},
			{"Submit Date", formatTime(time.Unix(0, derefInt64(v.SubmitTime)))},
		}
		if t := versionTag(v); t != nil { // job_tag.go
			pairs = append(pairs, kv{"Tag Name", t.Name}, kv{"Tag Description", orNone(t.Description)})
		}
		fmt.Fprint(m.stdout, formatKV(pairs))
		if *diffs && i < len(jobDiffs) {
			fmt.Fprintf(m.stdout, "%-11s =\n%s", "Diff", formatJobDiff(jobDiffs[i]))
		}
	}
	if first && *version >= 0 {
		fmt.Fprintf(m.stderr, "Error: job %q has no version %d\n", jobID, *version)
		return exitError
	}
	return exitOK
}

func derefUint(p *uint64) uint64 {
	if p == nil {
		return 0
	}
	return *p
}

func derefInt64(p *int64) int64 {
	if p == nil {
		return 0
	}
	return *p
}
