package nvidia

import "errors"

// errNoNVML is gpuLib.Init's error when the NVML library cannot be loaded
// (no NVIDIA driver on the machine, or a build without cgo).
var errNoNVML = errors.New("NVML library not found (no NVIDIA driver installed?)")

// gpuLib is the part of NVML the plugin uses.
type gpuLib interface {
	// Init loads and initialises NVML; errNoNVML when it is absent.
	Init() error
	// Shutdown releases NVML.
	Shutdown() error
	// GPUs lists the GPUs.
	GPUs() ([]*gpu, error)
	// Stats reads one GPU's statistics by UUID.
	Stats(uuid string) (*gpuStats, error)
}

// gpu is what NVML says of one GPU.
type gpu struct {
	UUID      string
	Model     string
	PCIBusID  string
	MemoryMiB int64
}

// gpuStats are one GPU's statistics; nil fields could not be read.
type gpuStats struct {
	UtilisationPct *uint32
	MemoryUsedMiB  *int64
	MemoryTotalMiB *int64
	TemperatureC   *uint32
	PowerMilliW    *uint32
}
