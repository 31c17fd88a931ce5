job "x" {
  group "g" {
    restart {
      attempts = 2
      mode     = "retry"
    }
    task "t" {
      driver = "exec"
    }
  }
}
