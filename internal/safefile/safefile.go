// Package safefile reads and writes the files a project may have
// planted: only regular files, within a bound, opened without blocking
// (a named pipe cannot hold the reader), written by temporary file and
// rename, never through a symlink unless it is the user's own (see
// WriteOptions.FollowOwnLink).
package safefile

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
)

// ErrNotRegular is matched by the error for a file that is a device, a
// pipe, a directory or anything else that is not a regular file.
var ErrNotRegular = errors.New("mcp: not a regular file")

// ErrTooLarge is matched by the error for a file larger than its bound.
var ErrTooLarge = errors.New("mcp: file too large")

// Read reads the regular file path, at most max bytes. A missing
// file gives (nil, nil). See Open for how it is opened.
func Read(path string, max int64) ([]byte, error) {
	f, err := Open(path, max)
	if f == nil || err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > max { // it grew while read
		return nil, fmt.Errorf("%w: more than %d bytes", ErrTooLarge, max)
	}
	return b, nil
}

// Open opens the regular file path for reading, if it is at most max
// bytes; a missing file gives (nil, nil). Its type is checked before it is
// opened, so that a path linking to a device is never opened (opening a
// serial port raises its DTR line and resets many boards), and again on
// the open file, which must be the one checked; it is opened without
// blocking, so that a named pipe put in its place cannot hold the caller.
// A reader should still stop at max+1 bytes: the file may grow.
func Open(path string, max int64) (*os.File, error) {
	before, err := os.Stat(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if !before.Mode().IsRegular() {
		return nil, fmt.Errorf("%w (%s)", ErrNotRegular, kindOf(before))
	}
	f, err := os.OpenFile(path, os.O_RDONLY|openNonblock, 0)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	info, err := f.Stat()
	switch {
	case err != nil:
	case !info.Mode().IsRegular():
		err = fmt.Errorf("%w (%s)", ErrNotRegular, kindOf(info))
	case !os.SameFile(before, info):
		err = fmt.Errorf("%w: it was replaced while opened", ErrNotRegular)
	case info.Size() > max:
		err = fmt.Errorf("%w: %d bytes, the bound is %d", ErrTooLarge, info.Size(), max)
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// ReadJSONObject reads the settings file path as a JSON object, keeping
// numbers as written. A missing or empty file is an empty object.
func ReadJSONObject(path string, max int64) (map[string]any, error) {
	b, err := Read(path, max)
	if err != nil {
		return nil, err
	}
	obj := map[string]any{}
	if len(bytes.TrimSpace(b)) == 0 {
		return obj, nil
	}
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	if err := d.Decode(&obj); err != nil {
		return nil, fmt.Errorf("not a JSON object: %w", err)
	}
	if obj == nil {
		return nil, errors.New("not a JSON object")
	}
	return obj, nil
}

func kindOf(info os.FileInfo) string {
	switch t := info.Mode().Type(); {
	case t&os.ModeSymlink != 0:
		return "symlink"
	case t.IsDir():
		return "directory"
	case t == 0:
		return "regular file"
	default:
		return t.String() + " file"
	}
}
