# Variable values for examples/variables.nomad.hcl (-var-file).
greeting = "good morning"
count    = 2
labels = {
  team = "web"
  tier = "frontend"
}
