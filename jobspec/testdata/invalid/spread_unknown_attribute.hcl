job "web" {
  spread {
    attribute = "${rack}"
  }
  group "g" {
    task "t" {
      driver = "mock_driver"
    }
  }
}
