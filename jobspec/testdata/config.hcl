# Driver config is free-form: values keep their types, nested blocks
# become lists of maps, labels nest one level more.
job "config" {
  datacenters = ["dc1"]

  group "g" {
    task "t" {
      driver = "docker"

      config {
        string    = "b"
        int       = 3
        large_int = 21474836470
        float     = 3.2
        bool      = true
        nothing   = null

        list_string = ["a", "b"]
        list_mixed  = [1, "a", 3.4, { k = "v" }]
        list_empty  = []

        map       = { "KEY" = "VAL", KEY2 = "VAL2" }
        map_empty = {}

        heredoc = <<EOT
line one ${NOMAD_TASK_NAME}
line two
EOT

        block {
          k = "b"
        }

        repeated {
          a = 1
        }

        repeated {
          b = 2
        }

        labeled "l1" {
          k = "v"
        }

        multi "l1" "l2" {
          k = "v"
        }

        outer {
          level = 1
          inner {
            level = 2
          }
        }
      }
    }
  }
}
