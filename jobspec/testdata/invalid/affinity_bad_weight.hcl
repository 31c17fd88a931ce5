job "web" {
  group "g" {
    task "t" {
      driver = "mock_driver"
      affinity {
        attribute = "${meta.rack}"
        value     = "r1"
        weight    = 150
      }
    }
  }
}
