package plan

import (
	"runtime"
	"sync"
)

// parallel calls f(i) for every i in [0,n) from one goroutine per CPU. Compute stays a
// pure function: f must only write to its own i.
func parallel(n int, f func(i int)) {
	workers := min(runtime.GOMAXPROCS(0), n)
	if workers <= 1 {
		for i := range n {
			f(i)
		}
		return
	}
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for i := w; i < n; i += workers {
				f(i)
			}
		})
	}
	wg.Wait()
}
