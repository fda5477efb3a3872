package auth

import "time"

// AdvanceClock moves the clock of the refresh margin d ahead, and returns
// the function that puts it back.
func AdvanceClock(d time.Duration) func() {
	old := now
	now = func() time.Time { return old().Add(d) }
	return func() { now = old }
}
