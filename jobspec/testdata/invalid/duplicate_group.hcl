job "x" {
  group "g" {
    task "t" {
      driver = "exec"
    }
  }
  group "g" {
    task "t" {
      driver = "exec"
    }
  }
}
