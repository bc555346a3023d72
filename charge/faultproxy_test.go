package charge_test

import (
	"context"
	"flag"
	"fmt"
	"math/rand/v2"
	"net/url"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/reconcilehq/reconcile/internal/database"
	"github.com/reconcilehq/reconcile/internal/dbtest"
	"github.com/reconcilehq/reconcile/internal/faultproxy"
	"github.com/reconcilehq/reconcile/internal/poll"
	"github.com/reconcilehq/reconcile/ledger"
	"github.com/reconcilehq/reconcile/providers/fake"
)

var faultCharges = flag.Int("faults.charges", 100, "charges per mode in TestFaultProxy (1000 for the full figure)")

// TestFaultProxy charges through a worker process whose every connection, to
// PostgreSQL and to the provider, goes through a proxy that keeps cutting
// connections, adding latency, black-holing traffic past the clients'
// timeouts and refusing new connections. No intent may be lost or charged
// twice, and every intent must agree with the provider's records.
func TestFaultProxy(t *testing.T) {
	t.Parallel()
	seed := *crashSeed
	if seed == 0 {
		seed = uint64(time.Now().UnixNano())
	}
	t.Logf("seed %d (rerun with -crash.seed=%d)", seed, seed)
	for i, honour := range []bool{true, false} {
		t.Run(fmt.Sprintf("honour_keys=%v", honour), func(t *testing.T) {
			t.Parallel()
			faultRun(t, *faultCharges, honour, rand.New(rand.NewPCG(seed, 100+uint64(i))))
		})
	}
}

func faultRun(t *testing.T, n int, honour bool, rnd *rand.Rand) {
	ctx := context.Background()
	r := &crashRig{t: t, honour: honour, url: dbtest.PostgresURL(t)}
	r.srv = fake.NewServer(fake.Options{HonourKeys: honour, Latency: crashLatency})
	defer r.srv.Close()
	store, err := database.Open(ctx, r.url, database.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	r.store = store
	r.db = newProbe(t, r.url)
	keys := r.createIntents(n)

	network, addr, err := pgTarget(r.url)
	if err != nil {
		t.Fatal(err)
	}
	dbProxy, err := faultproxy.New(network, addr)
	if err != nil {
		t.Fatal(err)
	}
	defer dbProxy.Close()
	provProxy, err := faultproxy.New("tcp", strings.TrimPrefix(r.srv.URL(), "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer provProxy.Close()
	r.workerURL, err = viaProxy(r.url, dbProxy.Addr())
	if err != nil {
		t.Fatal(err)
	}
	r.workerFake = "http://" + provProxy.Addr()

	start := time.Now()
	w := r.start(-1, "CRASH_PROVIDER_TIMEOUT=1s")
	r.waitInFlight(w)
	alive := func() error {
		select {
		case <-w.exited:
			return fmt.Errorf("the worker exited: %v", w.cmd.ProcessState)
		default:
			return nil
		}
	}
	faults := map[string]int{}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	// Faults go on until every intent has been tried at least once (or, as a
	// job whose fetch was cut waits for River's rescue, for a number of
	// rounds that grows with the size) and every kind of fault has struck;
	// then the network heals and the rest settles.
	rounds := 2 + n/200
	chaosDone := make(chan struct{})
	wg.Go(func() { defer close(chaosDone); chaos(stop, rounds, rnd, dbProxy, provProxy, faults) })
	poll.WaitErr(t, 4*time.Minute, "every intent to be tried", func() (bool, error) {
		if err := alive(); err != nil {
			t.Fatal(err)
		}
		select {
		case <-chaosDone:
			return true, nil
		default:
		}
		pending, err := r.db.countErr(`SELECT count(*) FROM intents WHERE state = 'pending'`)
		return pending == 0, err
	})
	close(stop)
	wg.Wait()
	healed := time.Now()
	poll.WaitErr(t, 3*time.Minute, "every intent to be settled", func() (bool, error) {
		if err := alive(); err != nil {
			t.Fatal(err)
		}
		open, err := r.db.countErr(`SELECT count(*) FROM intents WHERE state IN ('pending', 'processing')`)
		return open == 0, err
	})
	w.stop()
	took := time.Since(start)

	f := r.checkAgainstProvider(keys)
	var kinds []string
	for k, v := range faults {
		kinds = append(kinds, fmt.Sprintf("%s %d", k, v))
	}
	sort.Strings(kinds)
	ds, ps := dbProxy.Stats(), provProxy.Stats()
	t.Logf("honour_keys=%v: %d charges in %s (faults for %s, settled %s after); faults: %s; "+
		"PostgreSQL proxy: %d connections, %d cut, %d refused; provider proxy: %d connections, %d cut, %d refused; "+
		"%d succeeded, %d unknown (%d of them charged, to be settled by evidence), %d failed; "+
		"charged twice: %d, lost: %d, failed although charged: %d, pushed again without keys: %d",
		honour, n, took.Round(time.Millisecond), healed.Sub(start).Round(time.Millisecond), time.Since(healed).Round(time.Millisecond),
		strings.Join(kinds, ", "), ds.Conns, ds.Cut, ds.Refused, ps.Conns, ps.Cut, ps.Refused,
		f.states[ledger.StateSucceeded], f.states[ledger.StateUnknown], f.unknownCharged, f.states[ledger.StateFailed],
		f.twice, f.lost, f.failedCharged, f.repushed)
	if faults["cut database connections"] == 0 || faults["cut provider connections"] == 0 {
		t.Errorf("no open connection was cut: %v", faults)
	}
}

// chaos injects one fault after another into the two proxies, counting them
// by kind in faults. Every kind strikes once in each round, in a random
// order; after stop is closed it finishes the first round, if need be, and
// stops. It stops by itself after maxRounds.
func chaos(stop <-chan struct{}, maxRounds int, rnd *rand.Rand, db, prov *faultproxy.Proxy, faults map[string]int) {
	between := func(lo, hi int) time.Duration { return time.Duration(lo+rnd.IntN(hi-lo)) * time.Millisecond }
	stopped := func() bool {
		select {
		case <-stop:
			return true
		default:
			return false
		}
	}
	for round := 1; round <= maxRounds && (round == 1 || !stopped()); round++ {
		for _, kind := range rnd.Perm(8) {
			if round > 1 && stopped() {
				break
			}
			time.Sleep(between(20, 150))
			switch kind {
			case 0:
				faults["cut database"]++
				faults["cut database connections"] += cutSome(db)
			case 1:
				faults["cut provider"]++
				faults["cut provider connections"] += cutSome(prov)
			case 2:
				faults["latency database"]++
				db.SetLatency(between(10, 150))
				time.Sleep(between(200, 800))
				db.SetLatency(0)
			case 3:
				// Up to past the provider client's 1 s timeout.
				faults["latency provider"]++
				prov.SetLatency(between(50, 1300))
				time.Sleep(between(200, 1500))
				prov.SetLatency(0)
			case 4:
				// Up to past the job's 2 s timeout: queries hang, then
				// the flow resumes or the connections are cut.
				faults["black hole database"]++
				db.SetBlackHole(true)
				time.Sleep(between(300, 2500))
				if rnd.IntN(2) == 0 {
					faults["cut database connections"] += db.CutAll()
				}
				db.SetBlackHole(false)
			case 5:
				faults["black hole provider"]++
				prov.SetBlackHole(true)
				time.Sleep(between(300, 1500))
				prov.SetBlackHole(false)
			case 6:
				faults["refuse database"]++
				db.SetRefuse(true)
				time.Sleep(between(100, 500))
				db.SetRefuse(false)
			case 7:
				faults["refuse provider"]++
				prov.SetRefuse(true)
				time.Sleep(between(100, 500))
				prov.SetRefuse(false)
			}
		}
	}
}

// cutSome cuts the proxy's open connections. When none is open (the
// clients between requests, their idle connections closed) it tries again
// for up to a second, so that the fault strikes a connection in use.
func cutSome(p *faultproxy.Proxy) int {
	for range 20 {
		if n := p.CutAll(); n > 0 {
			return n
		}
		time.Sleep(50 * time.Millisecond)
	}
	return 0
}

// pgTarget is where a PostgreSQL URL's server listens: its unix socket when
// the host is a directory, else its TCP address.
func pgTarget(raw string) (network, addr string, err error) {
	u, err := url.Parse(raw)
	if err != nil {
		return "", "", err
	}
	port := u.Port()
	if p := u.Query().Get("port"); p != "" {
		port = p
	}
	if port == "" {
		port = "5432"
	}
	if h := u.Query().Get("host"); strings.HasPrefix(h, "/") {
		return "unix", filepath.Join(h, ".s.PGSQL."+port), nil
	}
	host := u.Hostname()
	if host == "" {
		host = "localhost"
	}
	return "tcp", host + ":" + port, nil
}

// viaProxy rewrites a PostgreSQL URL to reach its server through addr.
func viaProxy(raw, addr string) (string, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return "", err
	}
	q := u.Query()
	q.Del("host")
	q.Del("port")
	u.RawQuery = q.Encode()
	u.Host = addr
	return u.String(), nil
}
