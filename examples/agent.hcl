# A drover agent that is both server and client, keeping its state under
# /var/lib/drover. Start it with:
#
#   drover agent -config examples/agent.hcl
#
# Every key is described in docs/agent-config.md.

name       = "node-1"
region     = "global"
datacenter = "dc1"
data_dir   = "/var/lib/drover"
bind_addr  = "0.0.0.0"
log_level  = "info"

ports {
  http = 4646
  rpc  = 4647
}

server {
  enabled          = true
  bootstrap_expect = 1
}

client {
  enabled    = true
  node_class = "general"

  meta {
    rack = "r1"
  }

  reserved {
    cpu    = 200 # MHz
    memory = 256 # MB
    disk   = 1024 # MB
  }

  gc_interval   = "1m"
  gc_max_allocs = 50
}

# raw_exec runs tasks without isolation: it is off unless enabled here.
plugin "raw_exec" {
  config {
    enabled = true
  }
}
