package proto

// base.proto is compiled from the repository root so that its registered
// path, plugins/base/proto/base.proto, is the one the services import.
//go:generate protoc -I ../../.. --go_out=../../.. --go_opt=paths=source_relative plugins/base/proto/base.proto
