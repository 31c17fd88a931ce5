job "x" {
  type = "batch"
  periodic {
    cron  = "@hourly"
    crons = ["@daily"]
  }
  group "g" {
    task "t" {
      driver = "exec"
    }
  }
}
