job "constraints" {
  datacenters = ["dc1"]

  constraint {
    distinct_hosts = true
  }

  # Asks for nothing: no constraint results.
  constraint {
    distinct_hosts = false
  }

  constraint {
    operator = "distinct_hosts"
    value    = "true"
  }

  constraint {
    distinct_property = "${meta.rack}"
    value             = "2"
  }

  constraint {
    attribute = "${attr.kernel.version}"
    operator  = "version"
    value     = ">= 5.10"
  }

  constraint {
    attribute = "${attr.os.version}"
    version   = "> 20.04"
  }

  constraint {
    attribute = "${attr.unique.hostname}"
    regexp    = "^web-[0-9]+$"
  }

  constraint {
    attribute = "${node.class}"
    operator  = "regexp"
    value     = "^(large|xlarge)$"
  }

  constraint {
    attribute = "${meta.features}"
    operator  = "set_contains"
    value     = "ssd,gpu"
  }

  constraint {
    attribute = "${meta.maintenance}"
    operator  = "is_not_set"
  }

  constraint {
    attribute = "${meta.ready}"
    operator  = "is_set"
  }

  constraint {
    attribute = "${attr.cpu.numcores}"
    operator  = ">="
    value     = 4
  }

  constraint {
    attribute = "${attr.memory.totalbytes}"
    operator  = "<"
    value     = "68719476736"
  }

  group "g" {
    constraint {
      attribute = "${node.datacenter}"
      operator  = "!="
      value     = "dc9"
    }

    task "t" {
      driver = "exec"
      config {
        command = "/bin/true"
      }

      constraint {
        attribute = "${attr.driver.exec}"
        operator  = "<="
        value     = "1"
      }

      constraint {
        attribute = "${attr.consul.version}"
        operator  = ">"
        value     = "1.0"
      }
    }
  }
}
