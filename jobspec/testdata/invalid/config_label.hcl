job "x" {
  group "g" {
    task "t" {
      driver = "docker"
      config {
        mount "data" {
          target = "/data"
        }
      }
    }
  }
}
