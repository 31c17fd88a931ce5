job "x" {
  group "g" {
    count = "three"
    task "t" {
      driver = "exec"
    }
  }
}
