package pgstore_test

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/reconcilehq/reconcile/internal/dbtest"
	"github.com/reconcilehq/reconcile/ledger"
	"github.com/reconcilehq/reconcile/ledger/ledgertest"
	"github.com/reconcilehq/reconcile/ledger/pgstore"
	"github.com/reconcilehq/reconcile/money"
)

const (
	helperEnv   = "RECONCILE_CLAIM_HELPER"
	processes   = 4
	perProcess  = 16
	processKeys = 1000
	lease       = time.Minute
)

// TestMultiProcessClaims starts 4 processes of 16 goroutines each that create
// and claim the same 1,000 keys: across processes each key is created once
// and won once; after the lease expires each is taken over once.
func TestMultiProcessClaims(t *testing.T) {
	t.Parallel()
	url := dbtest.PostgresURL(t)
	wins := map[string]map[string]int{"create": {}, "claim": {}, "takeover": {}}
	for phase := range 2 {
		var (
			mu sync.Mutex
			wg sync.WaitGroup
		)
		for p := range processes {
			wg.Go(func() {
				cmd := exec.Command(os.Args[0], "-test.run=^TestClaimHelperProcess$", "-test.count=1")
				cmd.Env = append(os.Environ(), helperEnv+"=1", "HELPER_URL="+url,
					"HELPER_PHASE="+strconv.Itoa(phase), "HELPER_ID="+strconv.Itoa(p))
				var stderr bytes.Buffer
				cmd.Stderr = &stderr
				out, err := cmd.Output()
				if err != nil {
					t.Errorf("process %d: %v\n%s", p, err, stderr.String())
					return
				}
				mu.Lock()
				defer mu.Unlock()
				sc := bufio.NewScanner(bytes.NewReader(out))
				for sc.Scan() {
					what, key, ok := strings.Cut(sc.Text(), " ")
					if ok && wins[what] != nil {
						wins[what][key]++
					}
				}
			})
		}
		wg.Wait()
	}
	if t.Failed() {
		t.FailNow()
	}
	for what, m := range wins {
		if len(m) != processKeys {
			t.Errorf("%s: %d keys won, want %d", what, len(m), processKeys)
		}
		for key, n := range m {
			if n != 1 {
				t.Errorf("%s %s won %d times", what, key, n)
			}
		}
	}
	t.Logf("%d processes x %d goroutines x %d keys: %d created, %d claimed, %d taken over, each exactly once",
		processes, perProcess, processKeys, len(wins["create"]), len(wins["claim"]), len(wins["takeover"]))
}

// TestClaimHelperProcess is the body of one contending process; it only runs
// when started by TestMultiProcessClaims.
func TestClaimHelperProcess(t *testing.T) {
	if os.Getenv(helperEnv) != "1" {
		return
	}
	ctx := context.Background()
	s, err := pgstore.Open(ctx, os.Getenv("HELPER_URL"), pgstore.Config{MaxConns: 8})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	phase, _ := strconv.Atoi(os.Getenv("HELPER_PHASE"))
	id, _ := strconv.Atoi(os.Getenv("HELPER_ID"))
	amount, _ := money.Parse("99", "KES")
	now := ledgertest.T0.Add(time.Duration(phase) * lease)
	var (
		mu  sync.Mutex
		out = bufio.NewWriter(os.Stdout)
		wg  sync.WaitGroup
	)
	emit := func(what, key string) {
		mu.Lock()
		defer mu.Unlock()
		fmt.Fprintln(out, what, key)
	}
	for g := range perProcess {
		wg.Go(func() {
			for j := range processKeys {
				key := fmt.Sprintf("charge:order-%04d", (j+(id*perProcess+g)*17)%processKeys)
				if phase == 0 {
					_, created, err := s.CreateIntent(ctx, ledger.NewIntent{CreatedAt: ledgertest.T0,
						IntentParams: ledger.IntentParams{Key: key, Provider: "mpesa", Amount: amount}})
					if err != nil {
						t.Errorf("create %s: %v", key, err)
						return
					}
					if created {
						emit("create", key)
					}
				}
				owner := fmt.Sprintf("p%d-g%d", id, g)
				_, err := s.ClaimIntent(ctx, ledger.ClaimParams{Key: key, Owner: owner, Lease: lease, Now: now})
				switch {
				case errors.Is(err, ledger.ErrNotClaimable):
				case err != nil:
					t.Errorf("claim %s: %v", key, err)
					return
				case phase == 0:
					emit("claim", key)
				default:
					emit("takeover", key)
				}
			}
		})
	}
	wg.Wait()
	if err := out.Flush(); err != nil {
		t.Fatal(err)
	}
}
