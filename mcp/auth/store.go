package auth

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
)

// Store keeps what authorization obtains (client registrations, keyed by
// the authorization server's issuer; tokens, keyed by issuer, resource and
// client), so that a program started again need not ask the user again.
// Values are opaque JSON. Its methods may be called from several
// goroutines at once.
type Store interface {
	// Load returns the value saved under key, or nil and no error when
	// there is none.
	Load(ctx context.Context, key string) ([]byte, error)
	// Save saves value under key; a nil value deletes it.
	Save(ctx context.Context, key string, value []byte) error
}

// MemoryStore is a Store that lives as long as the program. Its zero value
// is ready.
type MemoryStore struct {
	mu sync.Mutex
	m  map[string][]byte
}

// Load implements Store.
func (s *MemoryStore) Load(_ context.Context, key string) ([]byte, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.m[key], nil
}

// Save implements Store.
func (s *MemoryStore) Save(_ context.Context, key string, value []byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if value == nil {
		delete(s.m, key)
		return nil
	}
	if s.m == nil {
		s.m = map[string][]byte{}
	}
	s.m[key] = append([]byte(nil), value...)
	return nil
}

// FileStore is a Store of files in a directory only the user may read:
// one file per key (named by the key's SHA-256), mode 0600, in a directory
// of mode 0700, each written whole (a temporary file renamed).
type FileStore struct {
	Dir string
	mu  sync.Mutex
}

// NewFileStore returns a FileStore in dir, or, when dir is "", in
// mcplug/oauth under the user's config directory (os.UserConfigDir).
func NewFileStore(dir string) (*FileStore, error) {
	if dir == "" {
		base, err := os.UserConfigDir()
		if err != nil {
			return nil, fmt.Errorf("mcp: auth: no directory for the token store: %w", err)
		}
		dir = filepath.Join(base, "mcplug", "oauth")
	}
	return &FileStore{Dir: dir}, nil
}

func (s *FileStore) path(key string) string {
	sum := sha256.Sum256([]byte(key))
	return filepath.Join(s.Dir, hex.EncodeToString(sum[:])+".json")
}

// Load implements Store. A file that others may read or write is refused:
// its tokens may have been seen or planted.
func (s *FileStore) Load(_ context.Context, key string) ([]byte, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.path(key)
	info, err := os.Stat(p)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("mcp: auth: token store: %w", err)
	}
	if info.Mode().Perm()&0o077 != 0 {
		return nil, fmt.Errorf("mcp: auth: token store file %s has mode %v; it must be readable by its owner only (0600)", p, info.Mode().Perm())
	}
	b, err := os.ReadFile(p)
	if err != nil {
		return nil, fmt.Errorf("mcp: auth: token store: %w", err)
	}
	return b, nil
}

// Save implements Store.
func (s *FileStore) Save(_ context.Context, key string, value []byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.path(key)
	if value == nil {
		if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("mcp: auth: token store: %w", err)
		}
		return nil
	}
	if err := os.MkdirAll(s.Dir, 0o700); err != nil {
		return fmt.Errorf("mcp: auth: token store: %w", err)
	}
	f, err := os.CreateTemp(s.Dir, ".tmp-*")
	if err != nil {
		return fmt.Errorf("mcp: auth: token store: %w", err)
	}
	defer os.Remove(f.Name())
	if err := f.Chmod(0o600); err != nil {
		f.Close()
		return fmt.Errorf("mcp: auth: token store: %w", err)
	}
	if _, err := f.Write(value); err != nil {
		f.Close()
		return fmt.Errorf("mcp: auth: token store: %w", err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("mcp: auth: token store: %w", err)
	}
	if err := os.Rename(f.Name(), p); err != nil {
		return fmt.Errorf("mcp: auth: token store: %w", err)
	}
	return nil
}
