//go:build race

package mcp_test

// raceEnabled: the race detector drops some of what sync.Pools are given,
// so allocations are not counted under it.
const raceEnabled = true
