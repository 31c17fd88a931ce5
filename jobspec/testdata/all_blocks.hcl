# Every block and argument the parser knows, including the Nomad features
# drover keeps as raw JSON for later.
job "everything" {
  name        = "everything-display-name"
  type        = "service"
  datacenters = ["dc1"]
  namespace   = "prod"
  region      = "eu"
  priority    = 75
  all_at_once = false
  node_pool   = "default"

  meta {
    owner = "platform"
  }

  constraint {
    attribute = "${attr.kernel.name}"
    value     = "linux"
  }

  affinity {
    attribute = "${node.datacenter}"
    value     = "dc1"
    weight    = 50
  }

  spread {
    attribute = "${node.datacenter}"
    weight    = 100

    target "dc1" {
      percent = 70
    }

    target "dc2" {
      percent = 30
    }
  }

  update {
    max_parallel      = 2
    health_check      = "checks"
    min_healthy_time  = "15s"
    healthy_deadline  = "3m"
    progress_deadline = "10m"
    auto_revert       = true
    auto_promote      = true
    canary            = 2
    stagger           = "30s"
  }

  migrate {
    max_parallel     = 1
    health_check     = "task_states"
    min_healthy_time = "10s"
    healthy_deadline = "5m"
  }

  reschedule {
    delay          = "30s"
    delay_function = "exponential"
    max_delay      = "1h"
    unlimited      = true
  }

  ui {
    description = "Everything at once"
    link {
      label = "Docs"
      url   = "https://example.com/docs"
    }
  }

  group "main" {
    count                      = 2
    shutdown_delay             = "5s"
    max_client_disconnect      = "1h"
    prevent_reschedule_on_lost = false

    meta = {
      group = "main"
    }

    constraint {
      operator = "distinct_hosts"
      value    = "true"
    }

    restart {
      attempts         = 3
      interval         = "5m"
      delay            = "10s"
      mode             = "delay"
      render_templates = true
    }

    ephemeral_disk {
      size   = 300
      sticky = true
    }

    network {
      mode     = "bridge"
      hostname = "main"

      port "http" {
        to           = 8080
        host_network = "public"
      }

      dns {
        servers = ["1.1.1.1"]
      }
    }

    service {
      name     = "main"
      port     = "http"
      provider = "nomad"
      tags     = ["a", "b"]

      meta {
        version = "1"
      }

      check {
        name     = "alive"
        type     = "tcp"
        interval = "10s"
        timeout  = "2s"

        check_restart {
          limit = 3
          grace = "90s"
        }
      }

      check {
        type     = "http"
        path     = "/health"
        interval = "5s"
        timeout  = "1s"
        method   = "GET"

        header {
          Authorization = ["Basic Zm9v"]
        }
      }
    }

    volume "data" {
      type      = "host"
      source    = "data"
      read_only = false
    }

    scaling {
      enabled = true
      min     = 1
      max     = 10

      policy {
        cooldown = "1m"
        check "cpu" {
          source = "nomad-apm"
        }
      }
    }

    consul {
      namespace = "team"
    }

    task "app" {
      driver       = "docker"
      user         = "app"
      kill_timeout = "20s"
      kill_signal  = "SIGTERM"
      leader       = true

      config {
        image   = "example/app:1.0"
        command = "/app"
        args    = ["-v", "--port", 8080]
        privileged = false
        ratio   = 0.5
        labels  = {
          "com.example.team" = "platform"
        }
        logging {
          type = "json-file"
          config {
            max-size = "10m"
          }
        }
      }

      env {
        APP_ENV = "prod"
      }

      meta {
        task = "app"
      }

      resources {
        cpu        = 500
        cores      = 0
        memory     = 256
        memory_max = 512

        device "nvidia/gpu" {
          count = 1

          constraint {
            attribute = "${device.attr.memory}"
            operator  = ">="
            value     = "2 GiB"
          }
        }
      }

      logs {
        max_files     = 5
        max_file_size = 10
        disabled      = false
      }

      restart {
        attempts = 1
      }

      constraint {
        attribute = "${attr.driver.docker}"
        value     = "1"
      }

      artifact {
        source      = "https://example.com/app.tar.gz"
        destination = "local/app"
        options {
          checksum = "sha256:abcd"
        }
      }

      template {
        data        = "PORT={{ env \"NOMAD_PORT_http\" }}\nDC=${node.datacenter}\n"
        destination = "local/app.env"
        env         = true
        change_mode = "restart"
        splay       = "5s"

        wait {
          min = "2s"
          max = "10s"
        }
      }

      volume_mount {
        volume      = "data"
        destination = "/data"
      }

      vault {
        policies    = ["app"]
        change_mode = "signal"
        change_signal = "SIGHUP"
      }

      identity {
        env  = true
        file = true
      }

      identity {
        name = "vault_default"
        aud  = ["vault.io"]
        ttl  = "1h"
      }

      service {
        name = "app-task"
        port = "http"
      }
    }
  }
}
