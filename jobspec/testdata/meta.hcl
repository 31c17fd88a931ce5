job "meta" {
  datacenters = ["dc1"]

  meta {
    owner = "team-a"
    tier  = 1
  }

  group "block-form" {
    meta {
      zone = "a"
    }

    task "t" {
      driver = "exec"
      config {
        command = "/bin/true"
      }

      meta {
        enabled = true
      }

      env {
        FOO = "bar"
        N   = 3
      }
    }
  }

  group "attribute-form" {
    meta = {
      zone          = "b"
      "dotted.key"  = "ok"
    }

    task "t" {
      driver = "exec"
      config {
        command = "/bin/true"
      }

      meta = {
        enabled = "false"
      }

      env = {
        "JAVA_OPTS" = "-Xmx1g"
        "a.b"       = "c"
      }
    }
  }
}
