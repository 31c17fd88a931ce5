//go:build linux && cgo

package nvidia

import (
	"errors"
	"fmt"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
)

// realLib is gpuLib on go-nvml, which dlopens libnvidia-ml.so.1 in Init.
type realLib struct {
	lib nvml.Interface
}

func newRealLib() gpuLib { return &realLib{lib: nvml.New()} }

func (r *realLib) Init() error {
	switch ret := r.lib.Init(); ret {
	case nvml.SUCCESS:
		return nil
	case nvml.ERROR_LIBRARY_NOT_FOUND:
		return errNoNVML
	default:
		return fmt.Errorf("nvml init: %w", ret)
	}
}

func (r *realLib) Shutdown() error {
	if ret := r.lib.Shutdown(); ret != nvml.SUCCESS {
		return fmt.Errorf("nvml shutdown: %w", ret)
	}
	return nil
}

func (r *realLib) GPUs() ([]*gpu, error) {
	n, ret := r.lib.DeviceGetCount()
	if ret != nvml.SUCCESS {
		return nil, fmt.Errorf("nvml device count: %w", ret)
	}
	out := make([]*gpu, 0, n)
	var errs []error
	for i := range n {
		d, ret := r.lib.DeviceGetHandleByIndex(i)
		if ret != nvml.SUCCESS {
			errs = append(errs, fmt.Errorf("nvml device %d: %w", i, ret))
			continue
		}
		g := &gpu{}
		if g.UUID, ret = d.GetUUID(); ret != nvml.SUCCESS {
			errs = append(errs, fmt.Errorf("nvml device %d uuid: %w", i, ret))
			continue
		}
		if g.Model, ret = d.GetName(); ret != nvml.SUCCESS {
			g.Model = "unknown"
		}
		if mem, ret := d.GetMemoryInfo(); ret == nvml.SUCCESS {
			g.MemoryMiB = int64(mem.Total >> 20)
		}
		if pci, ret := d.GetPciInfo(); ret == nvml.SUCCESS {
			g.PCIBusID = cString(pci.BusId[:])
		}
		out = append(out, g)
	}
	return out, errors.Join(errs...)
}

func (r *realLib) Stats(uuid string) (*gpuStats, error) {
	d, ret := r.lib.DeviceGetHandleByUUID(uuid)
	if ret != nvml.SUCCESS {
		return nil, fmt.Errorf("nvml device %s: %w", uuid, ret)
	}
	s := &gpuStats{}
	if u, ret := d.GetUtilizationRates(); ret == nvml.SUCCESS {
		s.UtilisationPct = &u.Gpu
	}
	if mem, ret := d.GetMemoryInfo(); ret == nvml.SUCCESS {
		used, total := int64(mem.Used>>20), int64(mem.Total>>20)
		s.MemoryUsedMiB, s.MemoryTotalMiB = &used, &total
	}
	if t, ret := d.GetTemperature(nvml.TEMPERATURE_GPU); ret == nvml.SUCCESS {
		s.TemperatureC = &t
	}
	if p, ret := d.GetPowerUsage(); ret == nvml.SUCCESS {
		s.PowerMilliW = &p
	}
	return s, nil
}

// cString turns a NUL-terminated C char array into a string.
func cString(b []int8) string {
	out := make([]byte, 0, len(b))
	for _, c := range b {
		if c == 0 {
			break
		}
		out = append(out, byte(c))
	}
	return string(out)
}
