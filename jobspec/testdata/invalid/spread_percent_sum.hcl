job "web" {
  group "g" {
    spread {
      attribute = "${meta.rack}"
      target "r1" {
        percent = 60
      }
      target "r2" {
        percent = 50
      }
    }
    task "t" {
      driver = "mock_driver"
    }
  }
}
