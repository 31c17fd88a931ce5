# A job file with variables, locals, a dynamic block and a scaling block.
#
#   drover job run -var-file examples/variables.vars.hcl examples/variables.nomad.hcl
#   NOMAD_VAR_greeting=bonjour drover job run -var-file examples/variables.vars.hcl examples/variables.nomad.hcl
#   drover job scale vars-demo 3
#
# See docs/jobs.md ("Variables, locals and functions", "Scaling").

variable "datacenters" {
  type    = list(string)
  default = ["*"]
}

variable "greeting" {
  type        = string
  default     = "hello"
  description = "What the task prints."
}

variable "count" {
  type    = number
  default = 1
  validation {
    condition     = var.count >= 1 && var.count <= 5
    error_message = "count must be between 1 and 5."
  }
}

variable "labels" {
  type    = map(string)
  default = {}
}

locals {
  message = "${title(var.greeting)} from ${join(",", var.datacenters)}"
}

job "vars-demo" {
  datacenters = var.datacenters

  meta {
    message = local.message
  }

  group "demo" {
    count = var.count

    scaling {
      min = 1
      max = 5
    }

    task "say" {
      driver = "raw_exec"

      config {
        command = "/bin/sh"
        args    = ["-c", "while true; do echo \"$MESSAGE\"; sleep 10; done"]
      }

      env {
        MESSAGE = local.message
      }

      # One meta entry per label given in the variable file.
      dynamic "meta" {
        for_each = length(var.labels) > 0 ? [var.labels] : []
        content {
          labels = jsonencode(meta.value)
        }
      }

      resources {
        cpu    = 50
        memory = 32
      }
    }
  }
}
