locals {
  a = local.b
  b = local.a
}

job "x" {
  group "g" {
    task "t" {
      driver = "exec"
    }
  }
}
