job "node-exporter" {
  type        = "system"
  datacenters = ["dc1"]

  constraint {
    attribute = "${attr.kernel.name}"
    value     = "linux"
  }

  group "exporter" {
    task "exporter" {
      driver = "raw_exec"

      config {
        command = "/usr/bin/node_exporter"
        args    = ["--web.listen-address=:9100"]
      }

      kill_signal  = "SIGINT"
      kill_timeout = "45s"

      resources {
        cpu    = 100
        memory = 64
      }
    }
  }
}
