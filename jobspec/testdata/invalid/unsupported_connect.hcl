job "x" {
  group "g" {
    network {
      mode = "bridge"
    }
    service {
      name = "api"
      connect {
        sidecar_service {}
      }
    }
    task "t" {
      driver = "exec"
    }
  }
}
