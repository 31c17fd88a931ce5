job "report" {
  type        = "batch"
  datacenters = ["dc1"]
  all_at_once = true

  group "run" {
    count = 1

    restart {
      attempts = 2
      interval = "30m"
      delay    = "15s"
      mode     = "fail"
    }

    reschedule {
      attempts  = 3
      interval  = "1h"
      delay     = "30s"
      unlimited = false
    }

    ephemeral_disk {
      size    = 500
      sticky  = true
      migrate = false
    }

    task "generate" {
      driver = "exec"
      user   = "nobody"

      config {
        command = "/usr/local/bin/report"
        args    = ["--out", "${NOMAD_ALLOC_DIR}/report.csv", "--days", 7]
      }

      resources {
        cpu    = 1000
        memory = 512
      }

      logs {
        max_files     = 3
        max_file_size = 5
      }
    }
  }
}
