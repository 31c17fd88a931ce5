package api

import (
	"fmt"
	"net/url"
	"strconv"
	"time"
)

// AllocResourceUsage is GET /v1/client/allocation/:id/stats: the
// allocation's resource usage, aggregated, and per task.
type AllocResourceUsage struct {
	ResourceUsage *ResourceUsage
	Tasks         map[string]*TaskResourceUsage
	Timestamp     int64
}

// TaskResourceUsage is one task's resource usage.
type TaskResourceUsage struct {
	ResourceUsage *ResourceUsage
	Timestamp     int64
	Pids          map[string]*ResourceUsage
}

// ResourceUsage holds memory, CPU and device usage.
type ResourceUsage struct {
	MemoryStats *MemoryStats
	CpuStats    *CpuStats
	DeviceStats []*DeviceGroupStats
}

// MemoryStats is memory usage in bytes.
type MemoryStats struct {
	RSS            uint64
	Cache          uint64
	Swap           uint64
	Usage          uint64
	MaxUsage       uint64
	KernelUsage    uint64
	KernelMaxUsage uint64
	Measured       []string
}

// CpuStats is CPU usage.
type CpuStats struct {
	SystemMode       float64
	UserMode         float64
	TotalTicks       float64
	ThrottledPeriods uint64
	ThrottledTime    uint64
	Percent          float64
	Measured         []string
}

// DeviceGroupStats are the statistics of a device group's instances.
type DeviceGroupStats struct {
	Vendor string
	Type   string
	Name   string
	// InstanceStats maps a device ID to its statistics.
	InstanceStats map[string]*DeviceStats
}

// ID renders the group as "vendor/type/name".
func (g *DeviceGroupStats) ID() string { return g.Vendor + "/" + g.Type + "/" + g.Name }

// DeviceStats are one device instance's statistics.
type DeviceStats struct {
	Summary   *StatValue
	Stats     *StatObject
	Timestamp time.Time
}

// StatObject is a tree of named statistics.
type StatObject struct {
	Nested     map[string]*StatObject
	Attributes map[string]*StatValue
}

// StatValue is one statistic; a numerator with a denominator is a fraction.
type StatValue struct {
	FloatNumeratorVal   *float64 `json:",omitempty"`
	FloatDenominatorVal *float64 `json:",omitempty"`
	IntNumeratorVal     *int64   `json:",omitempty"`
	IntDenominatorVal   *int64   `json:",omitempty"`
	StringVal           *string  `json:",omitempty"`
	BoolVal             *bool    `json:",omitempty"`
	Unit                string
	Desc                string
}

// String renders the value as a person reads it ("1024 / 4096 MiB").
func (v *StatValue) String() string {
	if v == nil {
		return ""
	}
	var s string
	switch {
	case v.IntNumeratorVal != nil:
		s = strconv.FormatInt(*v.IntNumeratorVal, 10)
		if v.IntDenominatorVal != nil {
			s += " / " + strconv.FormatInt(*v.IntDenominatorVal, 10)
		}
	case v.FloatNumeratorVal != nil:
		s = strconv.FormatFloat(*v.FloatNumeratorVal, 'f', 2, 64)
		if v.FloatDenominatorVal != nil {
			s += " / " + strconv.FormatFloat(*v.FloatDenominatorVal, 'f', 2, 64)
		}
	case v.StringVal != nil:
		s = *v.StringVal
	case v.BoolVal != nil:
		s = strconv.FormatBool(*v.BoolVal)
	}
	if v.Unit != "" {
		s += " " + v.Unit
	}
	return s
}

// HostStats is GET /v1/client/stats: the node's resource usage.
type HostStats struct {
	Memory *HostMemoryStats
	// CPU has one entry per CPU; percentages are over the time since the
	// agent's previous sample (since boot for its first).
	CPU []*HostCPUStats
	// DiskStats are the file systems measured: that of the alloc dir.
	DiskStats []*HostDiskStats
	// AllocDirStats is the file system of the alloc dir.
	AllocDirStats *HostDiskStats
	DeviceStats   []*DeviceGroupStats
	// Uptime is in seconds.
	Uptime uint64
	// CPUTicksConsumed is the MHz the host's CPUs are busy for, from
	// their fingerprinted speed.
	CPUTicksConsumed float64
	Timestamp        int64
}

// HostCPUStats is one CPU's use in percent.
type HostCPUStats struct {
	CPU    string
	User   float64
	System float64
	Idle   float64
}

// HostDiskStats is a file system's usage in bytes and percent.
type HostDiskStats struct {
	Device            string
	Mountpoint        string
	Size              uint64
	Used              uint64
	Available         uint64
	UsedPercent       float64
	InodesUsedPercent float64
}

// HostMemoryStats is the host's memory in bytes.
type HostMemoryStats struct {
	Total     uint64
	Available uint64
	Used      uint64
	Free      uint64
}

// Stats returns an allocation's resource usage from the agent of its node.
func (a *Allocations) Stats(alloc *Allocation, q *QueryOptions) (*AllocResourceUsage, error) {
	if alloc == nil || alloc.ID == "" {
		return nil, fmt.Errorf("alloc stats: no allocation")
	}
	var out AllocResourceUsage
	if _, err := a.c.query("/v1/client/allocation/"+url.PathEscape(alloc.ID)+"/stats", &out, q); err != nil {
		return nil, err
	}
	return &out, nil
}

// Stats returns the resource usage of the node of the agent queried.
func (n *Nodes) Stats(q *QueryOptions) (*HostStats, error) {
	var out HostStats
	if _, err := n.c.query("/v1/client/stats", &out, q); err != nil {
		return nil, err
	}
	return &out, nil
}
