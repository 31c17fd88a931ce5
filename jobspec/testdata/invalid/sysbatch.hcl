job "x" {
  type = "sysbatch"
  group "g" {
    task "t" {
      driver = "exec"
    }
  }
}
