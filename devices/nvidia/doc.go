// Package nvidia is the device plugin for NVIDIA GPUs. It reads the GPUs
// through NVML (github.com/NVIDIA/go-nvml), which it loads at run time: on a
// machine without the NVIDIA driver the plugin runs, logs once that NVML is
// not available, and reports no devices. Where GPUs are present it reports
// one device group per model ("nvidia/gpu/Tesla T4") with its memory, a
// task reserving GPUs gets NVIDIA_VISIBLE_DEVICES with their UUIDs (what the
// NVIDIA container runtime reads), and stats report utilisation, memory,
// temperature and power per GPU.
//
// Where it sits in the data flow: the agent's device catalog names it
// "nvidia"; the client's device manager configures it from the agent's
// plugin "nvidia" { config {...} } block and consumes it like any device
// plugin. NVML is behind the small gpuLib interface so that everything but
// the NVML calls themselves is tested without a GPU.
package nvidia
