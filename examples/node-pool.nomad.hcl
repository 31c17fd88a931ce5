# A job placed only on the nodes of pool "gpu" (examples/node-pool.hcl).
# Without node_pool a job runs in "default"; "all" runs on every pool.
#
#   drover node pool apply examples/node-pool.hcl
#   drover job run examples/node-pool.nomad.hcl
#   drover job plan -verbose examples/node-pool.nomad.hcl   # node scores
job "train" {
  node_pool = "gpu"

  group "train" {
    count = 1

    task "train" {
      driver = "raw_exec"

      config {
        command = "/bin/sh"
        args    = ["-c", "echo training on ${node.unique.name} in pool ${node.pool}; sleep 3600"]
      }
    }
  }
}
