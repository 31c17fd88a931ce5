job "x" {
  group "g" {
    task "t" {
      driver = ""
    }
  }
}
