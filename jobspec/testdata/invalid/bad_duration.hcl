job "x" {
  datacenters = ["dc1"]

  group "g" {
    task "t" {
      driver       = "exec"
      kill_timeout = "20 seconds"
    }
  }
}
