job "x" {
  group "g" {
    task "t" {
      driver = "exec"
      template {
        data  = "x"
        splay = "often"
      }
    }
  }
}
