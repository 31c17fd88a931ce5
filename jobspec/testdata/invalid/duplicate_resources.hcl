job "x" {
  group "g" {
    task "t" {
      driver = "exec"

      resources {
        cpu = 100
      }

      resources {
        memory = 128
      }
    }
  }
}
