package command

import (
	"encoding/json"
	"flag"
	"fmt"

	"github.com/drover-io/drover/api"
)

func runJobTagApply(m *Meta, args []string) int {
	fset := m.apiFlagSet("job tag apply", "[options] <job>", `
Tag a version of a job with a name (and a description): a tagged version is
kept whatever the number of later versions, and drover job revert takes
its name in place of its number. Tag names are unique per job. Without
-version, the job's current version is tagged.`)
	name := fset.String("name", "", "The name of the tag (required; unique per job).")
	desc := fset.String("description", "", "A description of the tag.")
	version := fset.Uint64("version", 0, "The version to tag; default: the current one.")
	if code, done := m.parse(fset, args); done {
		return code
	}
	if fset.NArg() != 1 {
		return m.usageError(fset, "this command takes one argument: the job ID")
	}
	if *name == "" {
		return m.usageError(fset, "-name is required")
	}
	var v *uint64
	fset.Visit(func(f *flag.Flag) {
		if f.Name == "version" {
			v = version
		}
	})
	c := m.apiClient()
	if c == nil {
		return exitError
	}
	jobID, code := m.resolveJob(c, fset.Arg(0), false)
	if jobID == "" {
		return code
	}
	var resp struct{ Version uint64 }
	if _, err := c.Jobs().TagVersionResp(jobID, *name, *desc, v, &resp, nil); err != nil {
		return m.fail(fmt.Sprintf("tagging job %q", jobID), err)
	}
	fmt.Fprintf(m.stdout, "Job version %d tagged with name %q\n", resp.Version, *name)
	return exitOK
}

func runJobTagUnset(m *Meta, args []string) int {
	fset := m.apiFlagSet("job tag unset", "[options] <job>", `
Remove a tag from the version of a job that has it.`)
	name := fset.String("name", "", "The name of the tag to remove (required).")
	if code, done := m.parse(fset, args); done {
		return code
	}
	if fset.NArg() != 1 {
		return m.usageError(fset, "this command takes one argument: the job ID")
	}
	if *name == "" {
		return m.usageError(fset, "-name is required")
	}
	c := m.apiClient()
	if c == nil {
		return exitError
	}
	jobID, code := m.resolveJob(c, fset.Arg(0), false)
	if jobID == "" {
		return code
	}
	if _, err := c.Jobs().UntagVersion(jobID, *name, nil); err != nil {
		return m.fail(fmt.Sprintf("removing tag %q of job %q", *name, jobID), err)
	}
	fmt.Fprintf(m.stdout, "Tag %q removed from job %q\n", *name, jobID)
	return exitOK
}

// versionTag decodes a job version's tag; nil when untagged.
func versionTag(j *api.Job) *api.JobVersionTag {
	if len(j.VersionTag) == 0 || string(j.VersionTag) == "null" {
		return nil
	}
	var t api.JobVersionTag
	if err := json.Unmarshal(j.VersionTag, &t); err != nil || t.Name == "" {
		return nil
	}
	return &t
}

// versionByTag returns the version of jobID tagged name.
func (m *Meta) versionByTag(c *api.Client, jobID, name string) (uint64, bool) {
	versions, _, _, err := c.Jobs().Versions(jobID, false, nil)
	if err != nil {
		m.fail(fmt.Sprintf("querying the versions of job %q", jobID), err)
		return 0, false
	}
	for _, v := range versions {
		if t := versionTag(v); t != nil && t.Name == name && v.Version != nil {
			return *v.Version, true
		}
	}
	fmt.Fprintf(m.stderr, "Error: job %q has no version numbered or tagged %q\n", jobID, name)
	return 0, false
}
