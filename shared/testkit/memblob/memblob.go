// Package memblob is a blob store in memory for tests: it keeps what is
// put, counts the PUTs, and can be told to fail them (a store that is
// down).
package memblob

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"maps"
	"sync"
)

// Store is a blob store in memory. The zero value is ready to use.
type Store struct {
	mu   sync.Mutex
	objs map[string][]byte
	puts int
	fail error
}

// Put keeps a copy of data under key, or fails with the error FailPuts set.
func (s *Store) Put(_ context.Context, key string, data []byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.puts++
	if s.fail != nil {
		return s.fail
	}
	if s.objs == nil {
		s.objs = map[string][]byte{}
	}
	s.objs[key] = bytes.Clone(data)
	return nil
}

// Get returns what was put under key.
func (s *Store) Get(_ context.Context, key string) ([]byte, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	b, ok := s.objs[key]
	if !ok {
		return nil, fmt.Errorf("no object %s", key)
	}
	return b, nil
}

// GetRange returns n bytes of key's object from off.
func (s *Store) GetRange(ctx context.Context, key string, off, n int64) ([]byte, error) {
	b, err := s.Get(ctx, key)
	if err != nil {
		return nil, err
	}
	if off < 0 || n < 0 || off+n > int64(len(b)) {
		return nil, errors.New("range past the end")
	}
	return b[off : off+n], nil
}

// Puts counts the PUTs tried, failed ones included.
func (s *Store) Puts() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.puts
}

// Objects returns a copy of what is stored, by key.
func (s *Store) Objects() map[string][]byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	return maps.Clone(s.objs)
}

// FailPuts makes every PUT from now on fail with err (nil: succeed).
func (s *Store) FailPuts(err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.fail = err
}
