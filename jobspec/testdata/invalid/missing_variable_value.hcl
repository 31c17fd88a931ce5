variable "image" {
  type = string
}

job "x" {
  group "g" {
    task "t" {
      driver = "docker"
      config {
        image = var.image
      }
    }
  }
}
