job "x" {
  parameterized {
    payload = "sometimes"
  }

  group "g" {
    task "t" {
      driver = "exec"
    }
  }
}
