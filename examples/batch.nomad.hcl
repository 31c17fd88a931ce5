# A batch job: runs to completion. Each of the three allocations counts to
# five and exits 0; `drover job run` returns once all of them completed.
job "countdown" {
  type = "batch"

  group "count" {
    count = 3

    restart {
      attempts = 0
      mode     = "fail"
    }

    task "count" {
      driver = "raw_exec"

      config {
        command = "/bin/sh"
        args    = ["-c", "for i in 1 2 3 4 5; do echo \"$NOMAD_ALLOC_INDEX: $i\"; sleep 1; done"]
      }

      resources {
        cpu    = 20
        memory = 16
      }
    }
  }
}
