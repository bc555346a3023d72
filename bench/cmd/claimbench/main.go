// Command claimbench drives the ledger's create-intent path with N concurrent
// clients for a fixed time and prints the throughput, for bench/claims.sh.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"runtime/pprof"
	"sync"
	"sync/atomic"
	"time"

	"github.com/reconcilehq/reconcile/ledger"
	"github.com/reconcilehq/reconcile/ledger/pgstore"
	"github.com/reconcilehq/reconcile/money"
)

func main() {
	url := flag.String("url", "", "PostgreSQL URL")
	clients := flag.Int("clients", 1, "concurrent clients")
	duration := flag.Duration("duration", 10*time.Second, "how long to run")
	prefix := flag.String("prefix", "bench", "key prefix")
	cpuprofile := flag.String("cpuprofile", "", "write a CPU profile to this file")
	flag.Parse()
	if *cpuprofile != "" {
		f, err := os.Create(*cpuprofile)
		if err != nil {
			fmt.Fprintln(os.Stderr, "claimbench:", err)
			os.Exit(1)
		}
		_ = pprof.StartCPUProfile(f)
		defer pprof.StopCPUProfile()
	}
	if err := run(*url, *clients, *duration, *prefix); err != nil {
		pprof.StopCPUProfile()
		fmt.Fprintln(os.Stderr, "claimbench:", err)
		os.Exit(1)
	}
}

func run(url string, clients int, d time.Duration, prefix string) error {
	ctx := context.Background()
	s, err := pgstore.Open(ctx, url, pgstore.Config{MaxConns: int32(clients)})
	if err != nil {
		return err
	}
	defer s.Close()
	amount, _ := money.Parse("100", "KES")
	var (
		done  atomic.Int64
		wg    sync.WaitGroup
		first atomic.Value
	)
	deadline := time.Now().Add(d)
	start := time.Now()
	for c := range clients {
		wg.Go(func() {
			for i := 0; time.Now().Before(deadline); i++ {
				n := ledger.NewIntent{CreatedAt: time.Now(), IntentParams: ledger.IntentParams{
					Key: fmt.Sprintf("%s-%d-%d", prefix, c, i), Provider: "mpesa", Amount: amount}}
				if _, _, err := s.CreateIntent(ctx, n); err != nil {
					first.CompareAndSwap(nil, err)
					return
				}
				done.Add(1)
			}
		})
	}
	wg.Wait()
	if err, ok := first.Load().(error); ok {
		return err
	}
	fmt.Printf("%.1f\n", float64(done.Load())/time.Since(start).Seconds())
	return nil
}
