package config

import (
	"time"

	"github.com/mcplug/mcplug/internal/headershelper"
)

// SetHeadersHelperTimeout changes the bound of a headersHelper command,
// and returns a function that restores it.
func SetHeadersHelperTimeout(d time.Duration) func() {
	old := headershelper.Timeout
	headershelper.Timeout = d
	return func() { headershelper.Timeout = old }
}
