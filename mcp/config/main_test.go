package config_test

import (
	"os"
	"testing"
)

func TestMain(m *testing.M) {
	os.Unsetenv("CLAUDE_CONFIG_DIR") // the tests' $HOME holds the user's files
	os.Exit(m.Run())
}
