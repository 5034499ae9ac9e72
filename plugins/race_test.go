//go:build race

package plugins

func init() { raceEnabled = true }
