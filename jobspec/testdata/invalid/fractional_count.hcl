job "x" {
  group "g" {
    count = 1.5
    task "t" {
      driver = "exec"
    }
  }
}
