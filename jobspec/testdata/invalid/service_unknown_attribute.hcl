job "x" {
  group "g" {
    service {
      name = "web"
      check {
        type  = "http"
        every = "10s"
      }
    }
    task "t" {
      driver = "exec"
    }
  }
}
