# A parameterized batch job: it never runs itself; each dispatch runs a
# child job with its own payload and metadata.
#
#   drover job run examples/dispatch.nomad.hcl
#   echo '{"file": "a.mp4"}' | drover job dispatch -meta input=a.mp4 transcode -
#   drover job status transcode         # the dispatched children
job "transcode" {
  type = "batch"

  parameterized {
    payload       = "required"
    meta_required = ["input"]
    meta_optional = ["profile"]
  }

  meta {
    profile = "default"
  }

  group "transcode" {
    restart {
      attempts = 0
      mode     = "fail"
    }

    task "transcode" {
      driver = "raw_exec"

      # The payload is written to local/request.json before the task starts.
      dispatch_payload {
        file = "request.json"
      }

      config {
        command = "/bin/sh"
        args    = ["-c", "echo \"input=$NOMAD_META_input profile=$NOMAD_META_profile\"; cat local/request.json"]
      }

      resources {
        cpu    = 20
        memory = 16
      }
    }
  }
}
