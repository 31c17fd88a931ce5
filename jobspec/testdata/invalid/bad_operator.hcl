job "x" {
  constraint {
    attribute = "${attr.kernel.name}"
    operator  = "~="
    value     = "linux"
  }
  group "g" {
    task "t" {
      driver = "exec"
    }
  }
}
