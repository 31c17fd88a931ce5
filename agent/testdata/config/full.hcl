# Every key of the agent configuration.
name       = "node-a"
region     = "eu"
datacenter = "dc2"
data_dir   = "/var/lib/drover"
plugin_dir = "/var/lib/drover/plugins"
bind_addr  = "0.0.0.0"
log_level  = "debug"

ports {
  http = 5646
  rpc  = 5647
}

addresses {
  http = "127.0.0.1"
  rpc  = "10.0.0.5"
}

server {
  enabled           = true
  bootstrap_expect  = 1
  heartbeat_grace   = "15s"
  min_heartbeat_ttl = "20s"
  num_schedulers    = 0
  job_max_count     = 2500
  eval_nack_timeout = "90s"
}

client {
  enabled                  = true
  servers                  = ["10.0.0.1:4647", "10.0.0.2:4647"]
  node_class               = "batch"
  alloc_dir                = "/srv/allocs"
  gc_interval              = "2m"
  gc_max_allocs            = 10
  gc_disk_usage_threshold  = 90
  gc_inode_usage_threshold = 75.5

  meta {
    rack = "r1"
    team = "infra"
  }

  min_dynamic_port = 21000
  max_dynamic_port = 22000

  reserved {
    cpu            = 500
    memory         = 256
    disk           = 1024
    reserved_ports = "22,8500-8600"
  }

  host_network "public" {
    cidr           = "203.0.113.0/24"
    reserved_ports = "22"
  }

  host_network "vpn" {
    interface = "tailscale0"
  }

  artifact {
    http_read_timeout              = "10m"
    http_max_size                  = "2GiB"
    git_timeout                    = "5m"
    decompression_file_count_limit = 100
    decompression_size_limit       = "1GB"
    disable_filesystem_isolation   = true
  }
  template {
    function_denylist    = ["plugin", "writeToFile", "sprig_*"]
    disable_file_sandbox = true
    block_query_wait     = "2m"
    wait {
      min = "2s"
      max = "10s"
    }
    wait_bounds {
      max = "1m"
    }
    nomad_retry {
      attempts    = 5
      backoff     = "1s"
      max_backoff = "30s"
    }
  }
}

plugin "raw_exec" {
  config {
    enabled = true
  }
}

plugin "docker" {
  config {
    allow_privileged = false
    volumes {
      enabled = true
    }
    extra_labels = ["job_name", "task_name"]
  }
}

plugin "nvidia" {}
