package safefile

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
)

// Write replaces the file name in dir with data, with WriteWith's
// defaults (nil options): a new file is 0600 less the umask, an existing
// one is never made wider than 0600. dir is created when missing. Neither
// dir nor the file may be a symlink or anything but a directory and a
// regular file: a repository that ships .claude as a link to the user's
// own settings must not have a decision written there. The new content
// goes to a temporary file in dir that is renamed over the old one, so a
// reader never sees half of it.
func Write(dir, name string, data []byte) error {
	return WriteFunc(dir, name, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	})
}

// WriteFunc is Write with the new content written by write, which may
// stream it; when write fails, the file is left as it was.
func WriteFunc(dir, name string, write func(io.Writer) error) error {
	return WriteWith(dir, name, nil, write)
}

// WriteOptions are how WriteWith writes; nil is a private file (Mode
// 0600, Private).
type WriteOptions struct {
	// Mode is the permissions a new file is created with, less the
	// process's umask (it is never chmod-ed wider than the umask lets it
	// be); an existing file keeps its own.
	Mode os.FileMode
	// Private caps the permissions at the user's own (0600), a new
	// file's and an existing one's: for a file that holds a secret.
	Private bool
	// FollowOwnLink writes through a symlink in the file's place (one a
	// dotfile manager keeps, say): the file it leads to is replaced, the
	// link kept. Every link on the way must belong to the user, and so
	// must the file it leads to, if there is one, and that file's
	// directory, which may not be writable by every user (a group's
	// write permission is left to the user's choice); otherwise the error
	// matches ErrNotOwned and nothing is written. A link that leads
	// nowhere yet has its file created. Without it, a link in the file's
	// place is never written through (ErrNotRegular).
	FollowOwnLink bool
	// BeforeRename, if set, runs once the new content is written, just
	// before it replaces the file, with the file's information then (nil
	// when there is none); its error leaves the file as it was (another
	// writer changed it meanwhile, say).
	BeforeRename func(current os.FileInfo) error
}

// ErrNotOwned is matched by the error for a link, a file or a directory a
// write would go through that another user owns, or a directory another
// user may write to.
var ErrNotOwned = errors.New("mcp: not the user's own")

// WriteWith writes the file name in dir with opts (see WriteOptions): the
// new content goes to a temporary file, created with O_EXCL in the
// file's directory, which is renamed over the file; every step is taken
// within that directory as it was opened and checked, so a directory
// swapped meanwhile for a link leads nowhere else. dir is created (0700,
// less the umask) when missing.
func WriteWith(dir, name string, opts *WriteOptions, write func(io.Writer) error) error {
	if opts == nil {
		opts = &WriteOptions{Mode: 0o600, Private: true}
	}
	path := filepath.Join(dir, name)
	followed := false
	if opts.FollowOwnLink {
		real, err := resolveOwnLink(path)
		if err != nil {
			return err
		}
		followed = real != path
		dir, name = filepath.Dir(real), filepath.Base(real)
		path = real
	}
	dirInfo, err := os.Lstat(dir)
	switch {
	case errors.Is(err, os.ErrNotExist) && !followed:
		if err := os.Mkdir(dir, 0o700); err != nil {
			return err
		}
		if dirInfo, err = os.Lstat(dir); err != nil {
			return err
		}
	case err != nil:
		return err
	}
	if !dirInfo.IsDir() {
		return fmt.Errorf("%w: %s is a %s, not a directory (it is not written through)", ErrNotRegular, dir, kindOf(dirInfo))
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return err
	}
	defer root.Close()
	opened, err := root.Stat(".")
	if err != nil {
		return err
	}
	if !os.SameFile(dirInfo, opened) {
		return fmt.Errorf("%w: %s was replaced while it was opened", ErrNotRegular, dir)
	}
	if followed {
		if err := ownDir(dir, opened); err != nil {
			return err
		}
	}
	info, err := root.Lstat(name)
	mode, exists := opts.Mode.Perm(), false
	switch {
	case errors.Is(err, os.ErrNotExist):
	case err != nil:
		return err
	case !info.Mode().IsRegular():
		return fmt.Errorf("%w: %s is a %s (it is not written through)", ErrNotRegular, path, kindOf(info))
	case followed && !ownedByUser(info):
		return fmt.Errorf("%w: %s belongs to %s (it is not written)", ErrNotOwned, path, ownerOf(info))
	default:
		mode, exists = info.Mode().Perm(), true
	}
	if opts.Private {
		mode &= 0o600 // never wider than the user's own
	}
	tmp, tmpName, err := createTemp(root, name, mode)
	if err != nil {
		return err
	}
	renamed := false
	defer func() {
		if !renamed {
			root.Remove(tmpName)
		}
	}()
	if err := fill(tmp, write, exists, mode); err != nil {
		return err
	}
	if opts.BeforeRename != nil {
		current, err := root.Lstat(name)
		if errors.Is(err, os.ErrNotExist) {
			current, err = nil, nil
		}
		if err != nil {
			return err
		}
		if err := opts.BeforeRename(current); err != nil {
			return err
		}
	}
	if err := root.Rename(tmpName, name); err != nil {
		return err
	}
	renamed = true
	return nil
}

// fill writes the new content to the temporary file and closes it; an
// existing file's mode is given to it (a new one has the mode it was
// created with, less the umask).
func fill(tmp *os.File, write func(io.Writer) error, exists bool, mode os.FileMode) error {
	bw := bufio.NewWriterSize(tmp, 64<<10)
	err := write(bw)
	if err == nil {
		err = bw.Flush()
	}
	if err == nil && exists {
		err = tmp.Chmod(mode)
	}
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	return err
}

// maxTempTries bounds the names tried for a temporary file, should
// someone keep taking them.
const maxTempTries = 100

// createTemp creates a new file ".name.NNNN" in root, with O_EXCL (a
// name taken, or a link planted there, is never opened) and mode, which
// the umask narrows.
func createTemp(root *os.Root, name string, mode os.FileMode) (*os.File, string, error) {
	for range maxTempTries {
		tmpName := "." + name + "." + strconv.FormatUint(rand.Uint64(), 36)
		f, err := root.OpenFile(tmpName, os.O_RDWR|os.O_CREATE|os.O_EXCL, mode)
		if errors.Is(err, os.ErrExist) {
			continue
		}
		return f, tmpName, err
	}
	return nil, "", fmt.Errorf("mcp: no free name for a temporary file of %s after %d tries", name, maxTempTries)
}
