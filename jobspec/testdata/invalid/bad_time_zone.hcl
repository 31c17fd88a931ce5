job "x" {
  type = "sysbatch"
  periodic {
    cron      = "@daily"
    time_zone = "Mars/Olympus_Mons"
  }
  group "g" {
    task "t" {
      driver = "exec"
    }
  }
}
