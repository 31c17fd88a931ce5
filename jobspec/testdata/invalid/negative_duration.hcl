job "x" {
  group "g" {
    restart {
      delay = "-5s"
    }
    task "t" {
      driver = "exec"
    }
  }
}
