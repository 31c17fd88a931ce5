job "x" {
  group "g" {
    task "t" {
      driver = "exec"
      lifecycle {
        sidecar = true
      }
    }
  }
}
