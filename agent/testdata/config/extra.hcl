# Merged into a dev agent with: drover agent -dev -config extra.hcl
plugin "fake_device" {
  config {
    count = 2
  }
}
client {
  meta { gpu = "fake" }
}
