job "x" {
  group "g" {
    count = 1
  }
}
