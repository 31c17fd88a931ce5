job "x" {
  constraint {
    attribute = "${attr.os.version}"
    operator  = "regexp"
    version   = ">= 1"
  }
  group "g" {
    task "t" {
      driver = "exec"
    }
  }
}
