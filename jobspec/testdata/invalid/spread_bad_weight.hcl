job "web" {
  group "g" {
    spread {
      attribute = "${node.datacenter}"
      weight    = 0
    }
    task "t" {
      driver = "mock_driver"
    }
  }
}
