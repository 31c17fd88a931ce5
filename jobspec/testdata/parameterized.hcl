job "transcode" {
  type = "sysbatch"

  parameterized {
    payload       = "required"
    meta_required = ["input"]
    meta_optional = ["profile"]
  }

  group "g" {
    task "t" {
      driver = "exec"
      config {
        command = "/bin/cat"
        args    = ["local/input.json"]
      }
      dispatch_payload {
        file = "input.json"
      }
    }
  }
}
