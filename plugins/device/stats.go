package device

import (
	"strconv"
	"time"
)

// DeviceGroupStats are the statistics of a group's instances.
type DeviceGroupStats struct {
	Vendor string
	Type   string
	Name   string
	// InstanceStats maps a device ID to its statistics.
	InstanceStats map[string]*DeviceStats
}

// DeviceStats are one device instance's statistics.
type DeviceStats struct {
	// Summary is the one value that says most to a person
	// ("utilisation 40 %"); Stats are all of them.
	Summary   *StatValue
	Stats     *StatObject
	Timestamp time.Time
}

// StatObject is a tree of named statistics.
type StatObject struct {
	Nested     map[string]*StatObject
	Attributes map[string]*StatValue
}

// StatValue is one statistic: a number (a scalar, or a fraction when its
// denominator is set), a string or a boolean, with a unit and a
// description. Nil pointers are unset, not zero.
type StatValue struct {
	FloatNumeratorVal   *float64
	FloatDenominatorVal *float64
	IntNumeratorVal     *int64
	IntDenominatorVal   *int64
	StringVal           *string
	BoolVal             *bool
	Unit                string
	Desc                string
}

// String renders the value as a person reads it: "1024 / 4096 MiB", "40 %".
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
