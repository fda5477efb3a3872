package testdir

import (
	"os"
	"path/filepath"
	"testing"
)

func TestWriteMakesTheFolders(t *testing.T) {
	path := filepath.Join(t.TempDir(), "a", "b", "c.json")
	Write(t, path, "{}")
	b, err := os.ReadFile(path)
	if err != nil || string(b) != "{}" {
		t.Fatalf("read %q, %v", b, err)
	}
}

func TestScratchIsHome(t *testing.T) {
	home, project := Scratch(t)
	if got, _ := os.UserHomeDir(); got != home {
		t.Fatalf("home is %q, want %q", got, home)
	}
	if home == project || !filepath.IsAbs(project) {
		t.Fatalf("home %q, project %q", home, project)
	}
}
