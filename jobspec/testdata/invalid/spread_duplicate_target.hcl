job "web" {
  group "g" {
    spread {
      attribute = "${meta.rack}"
      target "r1" {
        percent = 10
      }
      target "r1" {
        percent = 20
      }
    }
    task "t" {
      driver = "mock_driver"
    }
  }
}
