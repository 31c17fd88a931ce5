job "web" {
  affinity {
    attribute = "${meta.rack}"
    operator  = "distinct_hosts"
    value     = "r1"
  }
  group "g" {
    task "t" {
      driver = "mock_driver"
    }
  }
}
