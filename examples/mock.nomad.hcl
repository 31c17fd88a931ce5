# A job on the mock driver, which runs nothing: the task "runs" for
# run_for, then exits with exit_code. Useful to see the task lifecycle
# without running a process.
job "mock" {
  type = "batch"

  group "g" {
    task "fake" {
      driver = "mock_driver"

      config {
        run_for   = "3s"
        exit_code = 0
      }

      resources {
        cpu    = 10
        memory = 10
      }
    }
  }
}
