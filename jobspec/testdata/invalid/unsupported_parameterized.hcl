job "x" {
  parameterized {
    payload = "required"
  }

  group "g" {
    task "t" {
      driver = "exec"
    }
  }
}
