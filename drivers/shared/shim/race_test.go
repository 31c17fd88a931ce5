//go:build race

package shim

const raceNote = ", built with -race: the race detector's shadow memory inflates RSS"
