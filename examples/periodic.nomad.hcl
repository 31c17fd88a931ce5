# A periodic batch job: the leader launches a child job
# "report/periodic-<unix time>" every five minutes (in UTC). A launch is
# skipped while the previous child still runs (prohibit_overlap).
#
#   drover job run examples/periodic.nomad.hcl
#   drover job status report            # next launch and launched children
#   drover job periodic force report    # launch one now
job "report" {
  type = "batch"

  periodic {
    crons            = ["*/5 * * * *"]
    prohibit_overlap = true
    time_zone        = "UTC"
  }

  group "report" {
    restart {
      attempts = 0
      mode     = "fail"
    }

    task "report" {
      driver = "raw_exec"

      config {
        command = "/bin/sh"
        args    = ["-c", "echo \"report $NOMAD_JOB_ID at $(date -u +%FT%TZ)\""]
      }

      resources {
        cpu    = 20
        memory = 16
      }
    }
  }
}
