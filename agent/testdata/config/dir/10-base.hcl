data_dir  = "/base"
log_level = "info"
client {
  enabled = true
  servers = ["a:4647"]
  meta { a = "1" }
}
plugin "raw_exec" {
  config { enabled = false }
}
