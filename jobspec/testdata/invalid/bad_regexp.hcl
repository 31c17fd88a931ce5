job "x" {
  constraint {
    attribute = "${node.class}"
    operator  = "regexp"
    value     = "([a-z"
  }
  group "g" {
    task "t" {
      driver = "exec"
    }
  }
}
