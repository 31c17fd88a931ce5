job "x" {
  group "g" {
    task "t" {
      config {
        command = "/bin/true"
      }
    }
  }
}
