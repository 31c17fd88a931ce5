job "x" {
  group "g" {
    task "t" {
      driver = "exec"
    }

    task "t" {
      driver = "docker"
    }
  }
}
