job "empty" {
  datacenters = ["dc1"]
}
