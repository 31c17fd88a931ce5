# A sysbatch job: runs once to completion on every eligible node (here:
# every Linux node). A node that finished it does not run it again; a node
# that joins while the job is registered runs it too; a new version of the
# job runs again everywhere.
job "inventory" {
  type = "sysbatch"

  constraint {
    attribute = "${attr.kernel.name}"
    value     = "linux"
  }

  group "inventory" {
    restart {
      attempts = 0
      mode     = "fail"
    }

    task "inventory" {
      driver = "raw_exec"

      config {
        command = "/bin/sh"
        args    = ["-c", "echo \"alloc $NOMAD_ALLOC_ID on $(hostname): $(uname -r)\""]
      }

      resources {
        cpu    = 20
        memory = 16
      }
    }
  }
}
