job "x" {
  meta = { a = "1" }

  meta {
    b = "2"
  }

  group "g" {
    task "t" {
      driver = "exec"
    }
  }
}
