job "x" {
  group "g" {
    count = -1

    task "t" {
      driver = "exec"
    }
  }
}
