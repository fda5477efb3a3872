package config

// The locks of the writes: Claude Code's on ~/.claude.json, and
// mcplug's own on a project's .mcp.json.

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"
)

// lockFile takes the lock Claude Code takes on ~/.claude.json (a
// directory named after the file, ".lock" added, at the file's own path,
// a link's included, as Claude Code has it), waiting for another writer
// within ctx and lockWait. It is for the user's own files only: a
// repository could plant such a directory (see lockDir).
func lockFile(ctx context.Context, path string) (unlock func(), err error) {
	lock := path + ".lock"
	err = retry(ctx, func() (bool, error) {
		err := os.Mkdir(lock, 0o700)
		if err == nil {
			return true, nil
		}
		if !errors.Is(err, os.ErrExist) {
			return false, err
		}
		if info, err := os.Lstat(lock); err == nil && info.IsDir() && time.Since(info.ModTime()) > staleLock {
			// Its writer died. A lock that cannot be removed (a folder with
			// something in it, which no writer leaves) is not waited for.
			if err := os.Remove(lock); err != nil && !errors.Is(err, os.ErrNotExist) {
				return false, fmt.Errorf("%w (%s is stale and cannot be removed: %v)", ErrLocked, lock, err)
			}
			return lockFileAgain(lock)
		}
		return false, nil
	}, func() error {
		return fmt.Errorf("%w (%s is held; if no Claude Code or mcpls runs, remove it)", ErrLocked, lock)
	})
	if err != nil {
		return nil, err
	}
	return func() { os.Remove(lock) }, nil
}

// lockFileAgain takes the lock just freed of a dead writer's.
func lockFileAgain(lock string) (bool, error) {
	err := os.Mkdir(lock, 0o700)
	if errors.Is(err, os.ErrExist) {
		return false, nil // another writer took it first
	}
	return err == nil, err
}

// lockDir takes mcplug's lock on a project's .mcp.json among its own
// writers: flock(2) on the folder that holds it, which the system lets go
// when the writer dies and which no file a repository ships can hold or
// redirect (a .mcp.json.lock it commits is no lock). Claude Code takes
// none there; a write that it changes meanwhile is read again. Where
// flock is missing, no lock is taken.
func lockDir(ctx context.Context, dir string) (unlock func(), err error) {
	d, err := os.Open(dir)
	if err != nil {
		return nil, err
	}
	err = retry(ctx, func() (bool, error) { return tryLockDir(d) }, func() error {
		return fmt.Errorf("%w (another mcpls or program of mcplug holds the lock of %s)", ErrLocked, dir)
	})
	if err != nil {
		d.Close()
		return nil, err
	}
	return func() { d.Close() }, nil // closing lets go of the lock
}

// retry calls take until it takes the lock or fails, backing off from 5
// to 100 ms between calls, within ctx and lockWait; held is the error
// when the wait ends first.
func retry(ctx context.Context, take func() (bool, error), held func() error) error {
	deadline := time.Now().Add(lockWait)
	delay := 5 * time.Millisecond
	for {
		ok, err := take()
		if ok || err != nil {
			return err
		}
		if time.Now().After(deadline) {
			return held()
		}
		t := time.NewTimer(delay)
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-t.C:
		}
		delay = min(delay*2, 100*time.Millisecond)
	}
}
