job "x" {
  datacenters = ["dc1"]

  group "g" {
    count    = 1
    replicas = 3

    task "t" {
      driver = "exec"
    }
  }
}
