# A node pool: apply it with
#
#   drover node pool apply examples/node-pool.hcl
#
# then start clients in it (agent config: client { node_pool = "gpu" },
# or -node-pool=gpu) and place jobs there with node_pool = "gpu" in the
# job block (see examples/node-pool.nomad.hcl).
node_pool "gpu" {
  description = "Nodes with GPUs"

  meta {
    owner = "ml-team"
  }
}
