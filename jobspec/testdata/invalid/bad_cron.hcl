job "x" {
  type = "batch"

  periodic {
    crons            = ["*/15 * * * *", "61 * * * *"]
    prohibit_overlap = true
  }

  group "g" {
    task "t" {
      driver = "exec"
    }
  }
}
