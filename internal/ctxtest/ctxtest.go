// Package ctxtest has contexts for tests that prove work stops when it is cancelled,
// without measuring time: the context ends after the work has looked at it a given
// number of times, so a test can cancel in the middle of the work, deterministically.
package ctxtest

import (
	"context"
	"sync"
	"sync/atomic"
)

// Context ends the first time Err is called more than its limit; from then on Err
// returns context.Canceled and Done is closed. Looks counts every call to Err.
type Context struct {
	context.Context
	limit int64
	looks atomic.Int64
	once  sync.Once
	done  chan struct{}
}

// EndsAfter returns a context that lets its first n looks (calls to Err) pass.
func EndsAfter(n int64) *Context {
	return &Context{Context: context.Background(), limit: n, done: make(chan struct{})}
}

// Err is nil for the first n calls, then context.Canceled.
func (c *Context) Err() error {
	if c.looks.Add(1) > c.limit {
		c.once.Do(func() { close(c.done) })
		return context.Canceled
	}
	return nil
}

// Done is closed once Err has reported the end.
func (c *Context) Done() <-chan struct{} { return c.done }

// Looks is how many times Err was called.
func (c *Context) Looks() int64 { return c.looks.Load() }

// Ended reports whether Err has reported the end.
func (c *Context) Ended() bool { return c.looks.Load() > c.limit }
