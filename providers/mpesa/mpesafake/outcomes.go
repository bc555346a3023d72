package mpesafake

import (
	"math/rand/v2"
	"sync"
)

// Script returns a Decide function that gives the outcomes in order, one per
// push, and then keeps giving the last one.
func Script(outcomes ...Outcome) func(Push, *rand.Rand) Outcome {
	var mu sync.Mutex
	next := 0
	return func(Push, *rand.Rand) Outcome {
		mu.Lock()
		defer mu.Unlock()
		if len(outcomes) == 0 {
			return Outcome{}
		}
		o := outcomes[min(next, len(outcomes)-1)]
		next++
		return o
	}
}

// Mixed is a Decide function for demonstrations: from the seeded generator,
// about 70% of customers pay (a fifth of those callbacks arrive twice, and
// the payment also reaches the C2B confirmation URL), 10% cancel, 10% lack
// funds, and 10% pay but the callback is lost.
func Mixed(_ Push, rng *rand.Rand) Outcome {
	switch n := rng.IntN(10); {
	case n < 7:
		return Outcome{Callback: map[bool]Delivery{true: DeliverTwice, false: DeliverOnce}[rng.IntN(5) == 0], AlsoC2B: true,
			WithBalance: rng.IntN(2) == 0}
	case n == 7:
		return Outcome{ResultCode: ResultCancelled}
	case n == 8:
		return Outcome{ResultCode: ResultInsufficientFunds}
	}
	return Outcome{Callback: DeliverNever}
}
