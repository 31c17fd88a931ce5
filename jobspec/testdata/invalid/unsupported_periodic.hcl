job "x" {
  type = "batch"

  periodic {
    crons            = ["*/15 * * * *"]
    prohibit_overlap = true
  }

  group "g" {
    task "t" {
      driver = "exec"
    }
  }
}
