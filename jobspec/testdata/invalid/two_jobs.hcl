job "a" {
  group "g" {
    task "t" {
      driver = "exec"
    }
  }
}

job "b" {
  group "g" {
    task "t" {
      driver = "exec"
    }
  }
}
