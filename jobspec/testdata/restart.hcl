job "restarts" {
  datacenters = ["dc1"]

  group "g" {
    restart {
      attempts = 10
      interval = "30m"
      delay    = "25s"
      mode     = "delay"
    }

    task "uses-group-policy" {
      driver = "exec"
      config {
        command = "/bin/true"
      }
    }

    task "overrides" {
      driver = "exec"
      config {
        command = "/bin/false"
      }

      restart {
        attempts = 0
        mode     = "fail"
      }
    }

    task "partial" {
      driver = "exec"
      config {
        command = "/bin/sleep"
        args    = ["1h30m"]
      }

      restart {
        delay = "1h30m"
      }
    }
  }
}
