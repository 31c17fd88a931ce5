variable "image" {
  type    = string
  default = "redis:7"
}

variable "count" {
  type    = number
  default = 2
}

variable "dcs" {
  type    = list(string)
  default = ["dc1"]
}

locals {
  name     = "cache-${var.image}"
  port_arg = format("--port=%d", local.port)
  port     = 6379
}

job "vars" {
  datacenters = var.dcs

  group "cache" {
    count = var.count

    task "redis" {
      driver = "docker"

      config {
        image = var.image
        args  = [local.port_arg, upper("x"), "${local.port}"]
        host  = "${attr.unique.hostname}"
      }

      meta {
        name = local.name
        dcs  = join(",", var.dcs)
      }
    }
  }
}
