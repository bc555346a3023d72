// Command matchrss streams a bulk day of n intents and about n provider
// transactions through the in-memory matcher, as a reconcile run does from
// the store's scans (compact rows from a reused buffer), and prints the
// time taken and the process's peak resident memory.
package main

import (
	"flag"
	"fmt"
	"os"
	"runtime"
	"syscall"
	"time"

	"github.com/reconcilehq/reconcile/ledger"
	"github.com/reconcilehq/reconcile/matcher"
	"github.com/reconcilehq/reconcile/reconciler/scenario"
)

func main() {
	n := flag.Int("n", 10_000_000, "intents (about as many provider transactions)")
	structs := flag.Bool("structs", false, "feed ledger.Intent and ledger.ProviderTxn values instead of the store's compact rows")
	flag.Parse()
	bk := scenario.Bulk{Seed: 42, Provider: "mpesa", From: time.Date(2024, 2, 6, 0, 0, 0, 0, time.UTC), N: *n}
	from, to := bk.Window()
	start := time.Now()
	m, err := matcher.New(matcher.Options{Provider: bk.Provider, From: from, To: to, Now: bk.Now(), Grace: bk.Grace()})
	var loaded time.Duration
	switch {
	case err != nil:
	case *structs:
		err = bk.Intents(m.AddIntent)
		loaded = time.Since(start)
		if err == nil {
			err = bk.Txns(m.AddTxn)
		}
	default:
		err = feedRows(bk, m)
		loaded = time.Since(start)
		if err == nil {
			err = feedTxnRows(bk, m)
		}
	}
	var res *matcher.Result
	if err == nil {
		res, err = m.Result()
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "matchrss:", err)
		os.Exit(1)
	}
	el := time.Since(start)
	kinds := map[ledger.Kind]int{}
	for _, f := range res.Findings {
		kinds[f.Kind]++
	}
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	runtime.GC()
	var live runtime.MemStats
	runtime.ReadMemStats(&live)
	runtime.KeepAlive(m)
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	fmt.Printf("matchrss: %d intents + %d txns (generated while streaming) in %s (intents %s); %d findings %v; %d settled\n",
		res.Summary.Intents, res.Linked+res.Unlinked, el.Round(time.Millisecond), loaded.Round(time.Millisecond),
		len(res.Findings), kinds, len(res.Settlements))
	fmt.Printf("matchrss: peak RSS %.2f GiB; Go heap in use %.2f GiB, sys %.2f GiB, %d GCs; live after GC %.2f GiB\n",
		float64(ru.Maxrss)/(1<<20), float64(ms.HeapInuse)/(1<<30), float64(ms.Sys)/(1<<30), ms.NumGC,
		float64(live.HeapAlloc)/(1<<30))
}

// feedRows streams the intents as the reconciler does from the store's
// scans: every intent row, then every (intent key, provider reference)
// pair, each from a reused buffer.
func feedRows(bk scenario.Bulk, m *matcher.Matcher) error {
	var (
		buf scenario.RowBuf
		row ledger.IntentRow
	)
	for i := range bk.N {
		bk.IntentRow(i, &buf, &row)
		if err := m.AddIntentRow(&row); err != nil {
			return err
		}
	}
	for i := range bk.N {
		for _, ref := range bk.IntentRow(i, &buf, &row) {
			if ref == nil {
				continue
			}
			if err := m.AddProviderRef(row.Key, ref); err != nil {
				return err
			}
		}
	}
	return nil
}

func feedTxnRows(bk scenario.Bulk, m *matcher.Matcher) error {
	var buf scenario.RowBuf
	for i := range bk.N {
		if err := bk.TxnRowsOf(i, &buf, m.AddTxnRow); err != nil {
			return err
		}
	}
	return nil
}
