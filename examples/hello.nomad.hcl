# A long-running service: one task that prints a line every five seconds.
# raw_exec runs it as a plain process, so it works on any Linux machine with
# /bin/sh.
#
#   drover job run examples/hello.nomad.hcl
#   drover job status hello
#   drover alloc status <alloc-id>
#   drover job stop hello
job "hello" {
  type = "service"

  group "web" {
    count = 1

    task "greeter" {
      driver = "raw_exec"

      config {
        command = "/bin/sh"
        args    = ["-c", "i=0; while true; do i=$((i+1)); echo \"hello #$i from $NOMAD_ALLOC_ID\"; sleep 5; done"]
      }

      resources {
        cpu    = 50
        memory = 32
      }
    }
  }
}
