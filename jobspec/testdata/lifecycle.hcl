job "app" {
  datacenters = ["dc1"]

  group "app" {
    task "init-db" {
      driver = "exec"

      lifecycle {
        hook    = "prestart"
        sidecar = false
      }

      config {
        command = "/bin/migrate"
      }
    }

    task "proxy" {
      driver = "exec"

      lifecycle {
        hook    = "prestart"
        sidecar = true
      }

      config {
        command = "/bin/proxy"
      }
    }

    task "main" {
      driver = "exec"
      leader = true

      config {
        command = "/bin/app"
      }
    }

    task "announce" {
      driver = "exec"

      lifecycle {
        hook = "poststart"
      }

      config {
        command = "/bin/announce"
      }
    }

    task "cleanup" {
      driver = "exec"

      lifecycle {
        hook = "poststop"
      }

      config {
        command = "/bin/cleanup"
      }
    }
  }
}
