# Canary deployment: change the job (the VERSION below, say) and run it
# again: one canary of the new version starts beside the three running
# allocations, registered with the canary_tags. Nothing else changes until
# the deployment is promoted; then the old allocations are replaced one at
# a time. A canary that fails (or stays unhealthy past healthy_deadline)
# fails the deployment, and auto_revert puts the last stable version back.
#
#   drover job run examples/canary.nomad.hcl
#   (edit VERSION)  drover job run examples/canary.nomad.hcl
#   drover job status canary                 # "Promoted", "Canaries" columns
#   drover deployment promote <deployment-id>
#   drover job stop canary
#
# Blue/green: set canary = 3 (the count): a whole second set runs until
# promotion. auto_promote = true promotes as soon as every canary is
# healthy.
job "canary" {
  update {
    max_parallel      = 1
    canary            = 1
    auto_promote      = false
    auto_revert       = true
    min_healthy_time  = "5s"
    healthy_deadline  = "1m"
    progress_deadline = "5m"
  }

  group "web" {
    count = 3

    network {
      port "http" {}
    }

    service {
      name        = "canary-web"
      provider    = "nomad"
      port        = "http"
      tags        = ["live"]
      canary_tags = ["canary"]
    }

    task "server" {
      driver = "raw_exec"

      env {
        VERSION = "1"
      }

      config {
        command = "/bin/sh"
        args    = ["-c", "echo version $VERSION on $NOMAD_ADDR_http; while true; do sleep 5; done"]
      }

      resources {
        cpu    = 50
        memory = 32
      }
    }
  }
}
