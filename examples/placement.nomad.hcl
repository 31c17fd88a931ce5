# Placement: where a group may run (constraint), which nodes it prefers
# (affinity) and how it spreads over a node attribute (spread). On a single
# dev agent every allocation lands on the one node; on a cluster whose
# nodes set meta { rack = "..." } the three allocations go to three racks.
#
#   drover job plan examples/placement.nomad.hcl
#   drover job run examples/placement.nomad.hcl
#   drover alloc status -verbose <alloc-id>    # "Placement Metrics": the scores
#   drover job stop placement
job "placement" {
  type = "service"

  # Hard rule: only Linux nodes.
  constraint {
    attribute = "${attr.kernel.name}"
    value     = "linux"
  }

  group "web" {
    count = 3

    # Spread the group over racks evenly; nodes without meta.rack come
    # last. Add target "rack-1" { percent = 50 } blocks to give racks
    # uneven shares.
    spread {
      attribute = "${meta.rack}"
      weight    = 100
    }

    # Soft preference: nodes of class "fast", if there are any.
    affinity {
      attribute = "${node.class}"
      value     = "fast"
      weight    = 50
    }

    task "server" {
      driver = "raw_exec"

      # And rather not nodes marked as spot instances.
      affinity {
        attribute = "${meta.spot}"
        value     = "true"
        weight    = -50
      }

      config {
        command = "/bin/sh"
        args    = ["-c", "echo serving from $NOMAD_ALLOC_ID; while true; do sleep 5; done"]
      }

      resources {
        cpu    = 20
        memory = 16
      }
    }
  }
}
