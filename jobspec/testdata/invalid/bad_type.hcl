job "x" {
  type = "cron"
  group "g" {
    task "t" {
      driver = "exec"
    }
  }
}
