package server

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"time"
)

// TestFairSlotsStress: many namespaces acquiring with short deadlines, releasing
// at random, some granted just as their deadline ends: afterwards no slot is lost or doubled
// (total and held return to zero, no waiter is left), and every slot can be taken again.
func TestFairSlotsStress(t *testing.T) {
	f := newFairSlots(4, 2, 100)
	var wg sync.WaitGroup
	var mu sync.Mutex
	holding := map[string]int{}
	for i := range 400 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			key := fmt.Sprint("ns-", i%7)
			ctx, cancel := context.WithTimeout(context.Background(), time.Duration(rand.IntN(3000))*time.Microsecond)
			defer cancel()
			size := int64(1 + rand.IntN(60))
			release, ok := f.acquire(ctx, key, size)
			if !ok {
				return
			}
			mu.Lock()
			holding[key]++
			if holding[key] > 2 {
				t.Errorf("%s holds %d > share", key, holding[key])
			}
			mu.Unlock()
			f.mu.Lock()
			if b := f.bytes[key]; b > 100 && b != size {
				t.Errorf("%s holds %d bytes > share", key, b)
			}
			f.mu.Unlock()
			time.Sleep(time.Duration(rand.IntN(500)) * time.Microsecond)
			mu.Lock()
			holding[key]--
			mu.Unlock()
			release()
			release() // twice: the Once keeps it one release
		}()
	}
	wg.Wait()
	f.mu.Lock()
	if f.total != 0 || len(f.held) != 0 || len(f.waiting) != 0 || len(f.bytes) != 0 {
		t.Fatalf("after all released: total %d held %v waiting %d bytes %v", f.total, f.held, len(f.waiting), f.bytes)
	}
	f.mu.Unlock()
	for i := range 4 {
		if _, ok := f.acquire(context.Background(), fmt.Sprint("k", i), 100); !ok {
			t.Fatal("a slot was lost")
		}
	}
}
