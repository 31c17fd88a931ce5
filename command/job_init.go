package command

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
)

// defaultInitFile is the file `job init` writes when given none.
const defaultInitFile = "example.nomad.hcl"

// exampleJob is the job `job init` writes: a service that runs a shell loop
// with raw_exec, so it runs on any Linux machine with /bin/sh.
const exampleJob = `# An example job: one group running one task that prints a line every
# five seconds. Run it with:
#
#   drover job run example.nomad.hcl
#   drover job status example
#
# Job files use Nomad's HCL2 job specification.
job "example" {
  # "service" jobs run until stopped; "batch" jobs run to completion.
  type = "service"

  # Datacenters the job may run in; "*" (the default) means any.
  datacenters = ["*"]

  group "app" {
    # How many instances (allocations) of the group to run.
    count = 1

    # Restart a failed task in place up to twice in 30 minutes.
    restart {
      attempts = 2
      interval = "30m"
      delay    = "15s"
      mode     = "fail"
    }

    task "greeter" {
      # raw_exec runs a command as a plain process, without isolation.
      driver = "raw_exec"

      config {
        command = "/bin/sh"
        args    = ["-c", "while true; do echo \"hello from $NOMAD_ALLOC_ID\"; sleep 5; done"]
      }

      env {
        GREETING = "hello"
      }

      # What the scheduler reserves for the task: CPU in MHz, memory in MB.
      resources {
        cpu    = 50
        memory = 32
      }
    }
  }
}
`

func runJobInit(m *Meta, args []string) int {
	fset := m.flagSet("job init", "[options] [file]", `
Create an example job file to start from. The file is named
`+defaultInitFile+` unless a name is given; an existing file is never
overwritten.`)
	if code, done := m.parse(fset, args); done {
		return code
	}
	if fset.NArg() > 1 {
		return m.usageError(fset, "this command takes at most one argument: the file to write")
	}
	name := defaultInitFile
	if fset.NArg() == 1 {
		name = fset.Arg(0)
	}
	f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if errors.Is(err, fs.ErrExist) {
		fmt.Fprintf(m.stderr, "Error: job file %q already exists: remove it or name another file\n", name)
		return 1
	}
	if err != nil {
		fmt.Fprintf(m.stderr, "Error: create job file: %v\n", err)
		return 1
	}
	if _, err := f.WriteString(exampleJob); err != nil {
		f.Close()
		fmt.Fprintf(m.stderr, "Error: write job file %q: %v\n", name, err)
		return 1
	}
	if err := f.Close(); err != nil {
		fmt.Fprintf(m.stderr, "Error: write job file %q: %v\n", name, err)
		return 1
	}
	fmt.Fprintf(m.stdout, "Example job file written to %s\n", name)
	return 0
}
