package safefile

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// maxLinks bounds the links followed to a file (Linux's own bound).
const maxLinks = 40

// resolveOwnLink returns the file path leads to through the symlinks in
// its place, each of which must be the user's; the directories on the
// way are resolved as the system resolves them. A path that is no link
// is returned as it is.
func resolveOwnLink(path string) (string, error) {
	for hops := 0; ; hops++ {
		info, err := os.Lstat(path)
		if errors.Is(err, os.ErrNotExist) {
			return path, nil // a new file, or where a link leads to nothing yet
		}
		if err != nil {
			return "", err
		}
		if info.Mode()&os.ModeSymlink == 0 {
			return path, nil
		}
		if hops == maxLinks {
			return "", fmt.Errorf("%w: %s: more than %d links", ErrNotRegular, path, maxLinks)
		}
		if !ownedByUser(info) {
			return "", fmt.Errorf("%w: %s is a link that belongs to %s (it is not written through)", ErrNotOwned, path, ownerOf(info))
		}
		target, err := os.Readlink(path)
		if err != nil {
			return "", err
		}
		if !filepath.IsAbs(target) {
			// Not cleaned: "a/link/../b" is where the link leads, then up.
			target = filepath.Dir(path) + string(filepath.Separator) + target
		}
		i := strings.LastIndexByte(target, filepath.Separator)
		dir, base := target[:i], target[i+1:]
		if dir == "" {
			dir = string(filepath.Separator)
		}
		if base == "" || base == "." || base == ".." {
			return "", fmt.Errorf("%w: %s leads to a directory (%s)", ErrNotRegular, path, target)
		}
		real, err := filepath.EvalSymlinks(dir)
		if err != nil {
			return "", fmt.Errorf("%w: %s leads into %s, which cannot be resolved: %v", ErrNotRegular, path, dir, err)
		}
		path = filepath.Join(real, base)
	}
}

// ownDir checks the directory a link leads into: the user's, and not
// writable by every user (who could, could put another file in place of
// the one written). A group's write permission is not checked: with a
// group of the user's own, the usual setting, it lets in no one else.
func ownDir(dir string, info os.FileInfo) error {
	switch {
	case !ownedByUser(info):
		return fmt.Errorf("%w: the link leads into %s, which belongs to %s (it is not written through)", ErrNotOwned, dir, ownerOf(info))
	case info.Mode().Perm()&0o002 != 0:
		return fmt.Errorf("%w: the link leads into %s, which every user may write to (it is not written through)", ErrNotOwned, dir)
	}
	return nil
}
