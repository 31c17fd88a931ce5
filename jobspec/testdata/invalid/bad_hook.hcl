job "x" {
  group "g" {
    task "t" {
      lifecycle {
        hook = "prerun"
      }
      driver = "exec"
    }
  }
}
