# A Nomad agent configuration as an operator writes it, using every
# top-level block and most keys of Nomad's agent configuration. drover
# starts with it unchanged: what it does not have is logged once as ignored.

name       = "worker-07"
region     = "europe"
datacenter = "ams1"
data_dir   = "/opt/nomad/data"
plugin_dir = "/opt/nomad/plugins"
bind_addr  = "0.0.0.0"

log_level            = "DEBUG"
log_json             = true
log_include_location = true
log_file             = "/var/log/nomad/"
log_rotate_bytes     = 10485760
log_rotate_duration  = "12h"
log_rotate_max_files = 5
enable_syslog        = false
syslog_facility      = "LOCAL3"

leave_on_interrupt          = true
leave_on_terminate          = true
disable_update_check        = true
disable_anonymous_signature = true
enable_debug                = false

http_api_response_headers {
  "Access-Control-Allow-Origin" = "*"
}

ports {
  http = 4646
  rpc  = 4647
  serf = 4648
}

addresses {
  http = "0.0.0.0"
  rpc  = "10.1.0.7"
  serf = "10.1.0.7"
}

advertise {
  http = "10.1.0.7"
  rpc  = "10.1.0.7"
  serf = "10.1.0.7:5648"
}

server {
  enabled                 = true
  bootstrap_expect        = 1
  heartbeat_grace         = "30s"
  min_heartbeat_ttl       = "15s"
  num_schedulers          = 2
  enabled_schedulers      = ["service", "batch", "system"]
  node_gc_threshold       = "48h"
  job_gc_interval         = "5m"
  job_gc_threshold        = "4h"
  eval_gc_threshold       = "1h"
  deployment_gc_threshold = "1h"
  batch_eval_gc_threshold = "12h"
  max_heartbeats_per_second = 25.5
  raft_protocol           = 3
  encrypt                 = "cg8StVXbQJ0gPvMd9o7yrg=="
  license_path            = "/etc/nomad.d/license.hclic"

  server_join {
    retry_join     = ["10.1.0.5", "10.1.0.6"]
    retry_max      = 3
    retry_interval = "15s"
  }

  default_scheduler_config {
    scheduler_algorithm = "spread"

    preemption_config {
      batch_scheduler_enabled   = true
      system_scheduler_enabled  = true
      service_scheduler_enabled = false
    }
  }

  plan_rejection_tracker {
    enabled        = true
    node_threshold = 100
    node_window    = "31m"
  }
}

client {
  enabled           = true
  node_class        = "compute"
  node_pool         = "batch-pool"
  network_interface = "eth0"
  cpu_total_compute = 12000
  memory_total_mb   = 16384
  gc_interval       = "2m"
  gc_max_allocs     = 100
  max_kill_timeout  = "1m"
  network_speed     = 1000
  no_host_uuid      = true
  chroot_env = {
    "/bin" = "/bin"
    "/etc" = "/etc"
  }

  options {
    "driver.allowlist"                      = "docker,exec,raw_exec"
    "fingerprint.denylist"                  = "env_aws,env_gce"
    "docker.privileged.enabled"             = "true"
    "fingerprint.network.disallow_link_local" = "true"
  }

  meta {
    "rack"           = "r12"
    "connect.log_level" = "info"
    owner            = "team-batch"
  }

  reserved {
    cpu            = 500
    memory         = 512
    disk           = 1024
    reserved_ports = "22,80,8500-8600"
  }

  server_join {
    retry_join = ["provider=aws tag_key=nomad tag_value=server"]
  }

  host_volume "scratch" {
    path      = "/tmp" # must exist when the agent starts
    read_only = false
  }

  host_network "public" {
    cidr = "203.0.113.0/24"
  }

  template {
    disable_file_sandbox = true
  }

  artifact {
    http_read_timeout = "30m"
  }

  drain_on_shutdown {
    deadline           = "5m"
    force              = false
    ignore_system_jobs = true
  }
}

acl {
  enabled    = true
  token_ttl  = "30s"
  policy_ttl = "60s"
}

audit {
  enabled = true
}

autopilot {
  cleanup_dead_servers      = true
  last_contact_threshold    = "200ms"
  max_trailing_logs         = 250
  server_stabilization_time = "10s"
}

consul {
  address             = "127.0.0.1:8500"
  auto_advertise      = true
  server_auto_join    = true
  client_auto_join    = true
  server_service_name = "nomad"
}

consul {
  name    = "secondary"
  address = "10.2.0.1:8500"
}

vault {
  enabled = true
  address = "https://vault.service.consul:8200"
}

keyring "awskms" {
  active     = true
  region     = "eu-west-1"
  kms_key_id = "alias/nomad"
}

limits {
  http_max_conns_per_client = 200
  rpc_max_conns_per_client  = 200
}

reporting {
  license {
    enabled = false
  }
}

rpc {
  accept_backlog = 512
}

sentinel {
  import "custom-plugin" {
    path = "/opt/sentinel/plugins/custom"
  }
}

telemetry {
  collection_interval        = "1s"
  disable_hostname           = true
  prometheus_metrics         = true
  publish_allocation_metrics = true
  publish_node_metrics       = true
}

tls {
  http      = true
  rpc       = true
  ca_file   = "/etc/nomad.d/ca.pem"
  cert_file = "/etc/nomad.d/server.pem"
  key_file  = "/etc/nomad.d/server-key.pem"
}

ui {
  enabled = true

  consul {
    ui_url = "https://consul.example.com:8500/ui"
  }
}

plugin "raw_exec" {
  config {
    enabled = true
  }
}

plugin "docker" {
  args = ["-debug"]

  config {
    allow_privileged = false
    volumes {
      enabled = true
    }
  }
}
