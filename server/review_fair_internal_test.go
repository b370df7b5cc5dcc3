package server

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"time"
)

// TestReviewFairSlotsStress (holds): many namespaces acquiring with short deadlines, releasing
// at random, some granted just as their deadline ends: afterwards no slot is lost or doubled
// (total and held return to zero, no waiter is left), and every slot can be taken again.
func TestReviewFairSlotsStress(t *testing.T) {
	f := newFairSlots(4, 2)
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
			release, ok := f.acquire(ctx, key)
			if !ok {
				return
			}
			mu.Lock()
			holding[key]++
			if holding[key] > 2 {
				t.Errorf("%s holds %d > share", key, holding[key])
			}
			mu.Unlock()
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
	if f.total != 0 || len(f.held) != 0 || len(f.waiting) != 0 {
		t.Fatalf("after all released: total %d held %v waiting %d", f.total, f.held, len(f.waiting))
	}
	f.mu.Unlock()
	for i := range 4 {
		if _, ok := f.acquire(context.Background(), fmt.Sprint("k", i)); !ok {
			t.Fatal("a slot was lost")
		}
	}
}
