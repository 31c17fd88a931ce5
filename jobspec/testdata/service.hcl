# A web service: the usual shape of a Nomad service job.
job "web" {
  datacenters = ["dc1", "dc2"]
  type        = "service"
  region      = "global"
  namespace   = "default"
  priority    = 60

  update {
    max_parallel     = 1
    min_healthy_time = "10s"
    healthy_deadline = "5m"
    auto_revert      = true
    canary           = 1
  }

  group "frontend" {
    count = 3

    network {
      port "http" {
        to = 8080
      }
      port "admin" {
        static = 9000
      }
    }

    service {
      name = "web"
      port = "http"
      tags = ["urlprefix-/"]

      check {
        type     = "http"
        path     = "/health"
        interval = "10s"
        timeout  = "2s"
      }
    }

    task "server" {
      driver = "docker"

      config {
        image = "nginx:1.27"
        ports = ["http", "admin"]

        mount {
          type   = "bind"
          source = "local/nginx.conf"
          target = "/etc/nginx/nginx.conf"
        }

        mount {
          type   = "tmpfs"
          target = "/cache"
          tmpfs_options {
            size = 100000
          }
        }

        labels = {
          team = "web"
        }
      }

      resources {
        cpu    = 500
        memory = 256
      }
    }
  }
}
