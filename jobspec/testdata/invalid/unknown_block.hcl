job "x" {
  datacenters = ["dc1"]

  group "g" {
    task "t" {
      driver = "exec"

      sidecar_task {
        name = "s"
      }
    }
  }
}
