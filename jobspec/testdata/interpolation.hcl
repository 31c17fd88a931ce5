# References resolved later by the scheduler or the client stay as written.
job "interp" {
  datacenters = ["dc1"]

  constraint {
    attribute = "${node.datacenter}"
    operator  = "!="
    value     = "${meta.excluded_dc}"
  }

  constraint {
    attribute = attr.cpu.arch
    value     = "amd64"
  }

  group "g" {
    task "t" {
      driver = "exec"

      config {
        command = "${NOMAD_TASK_DIR}/run.sh"
        args = [
          "--alloc=${NOMAD_ALLOC_ID}",
          "--home=${env["HOME"]}",
          "--host=${node.unique.name}-${attr.unique.hostname}",
          "${ meta.spaced }",
          "$${not_interpolated}",
          "${NOMAD_META_owner}",
        ]
        nested = {
          path = "${NOMAD_ALLOC_DIR}/data"
          list = ["${node.class}"]
        }
      }

      env {
        DC      = "${node.datacenter}"
        PORT    = "${NOMAD_PORT_http}"
        REGION  = "${node.region}"
        UPSTREAM = "http://${NOMAD_UPSTREAM_ADDR_db}/"
      }

      meta {
        rack = "${meta.rack}"
      }
    }
  }
}
