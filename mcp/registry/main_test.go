package registry_test

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain checks that no goroutine of a test (a request, a stalled
// answer) outlives the tests.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
