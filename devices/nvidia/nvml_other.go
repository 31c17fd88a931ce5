//go:build !linux || !cgo

package nvidia

// noLib is gpuLib where NVML cannot be used (no cgo, or not Linux).
type noLib struct{}

func newRealLib() gpuLib { return noLib{} }

func (noLib) Init() error                     { return errNoNVML }
func (noLib) Shutdown() error                 { return nil }
func (noLib) GPUs() ([]*gpu, error)           { return nil, errNoNVML }
func (noLib) Stats(string) (*gpuStats, error) { return nil, errNoNVML }
