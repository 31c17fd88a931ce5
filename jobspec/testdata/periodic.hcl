job "report" {
  type = "batch"

  periodic {
    crons            = ["*/15 * * * *", "0 3 * * 1-5"]
    prohibit_overlap = true
    time_zone        = "Europe/Berlin"
  }

  group "g" {
    task "t" {
      driver = "exec"
      config {
        command = "/bin/date"
      }
    }
  }
}
