//go:build !race

package shim

const raceNote = ""
