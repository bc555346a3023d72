package findings

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/reconcilehq/reconcile/ledger"
	"github.com/reconcilehq/reconcile/schedule"
)

// ParseKind validates s as a finding kind.
func ParseKind(s string) (ledger.Kind, bool) {
	if slices.Contains(ledger.Kinds, ledger.Kind(s)) {
		return ledger.Kind(s), true
	}
	return "", false
}

// KindNames lists the kinds, comma-separated, for messages.
func KindNames() string {
	names := make([]string, len(ledger.Kinds))
	for i, k := range ledger.Kinds {
		names[i] = string(k)
	}
	return strings.Join(names, ", ")
}

// Counter counts findings by provider, kind and status; a ledger.Store
// has it.
type Counter interface {
	CountFindings(ctx context.Context) ([]ledger.FindingCount, error)
}

// Providers are the providers findings can be filtered by, with the zone
// each one's dates are read in: the configured ones (zones) and any that
// findings name although it is no longer configured (UTC).
func Providers(ctx context.Context, c Counter, zones map[string]*time.Location) (map[string]*time.Location, error) {
	out := make(map[string]*time.Location, len(zones))
	for n, z := range zones {
		if z == nil {
			z = time.UTC
		}
		out[n] = z
	}
	counts, err := c.CountFindings(ctx)
	if err != nil {
		return nil, err
	}
	for _, cnt := range counts {
		if _, ok := out[cnt.Provider]; !ok {
			out[cnt.Provider] = time.UTC
		}
	}
	return out, nil
}

// ProviderNames are the names of Providers, sorted.
func ProviderNames(ps map[string]*time.Location) []string {
	return slices.Sorted(maps.Keys(ps))
}

// ParseStatuses reads the statuses a list asks for: open, acknowledged,
// resolved, or "all" for every status (nil).
func ParseStatuses(names []string) ([]ledger.FindingStatus, error) {
	var out []ledger.FindingStatus
	for _, s := range names {
		if strings.EqualFold(strings.TrimSpace(s), "all") {
			return nil, nil
		}
		st, ok := ledger.ParseFindingStatus(s)
		if !ok {
			return nil, fmt.Errorf("%q: want open, acknowledged, resolved or all", s)
		}
		out = append(out, st)
	}
	return out, nil
}

// ParseKinds reads the kinds a list asks for.
func ParseKinds(names []string) ([]ledger.Kind, error) {
	var out []ledger.Kind
	for _, k := range names {
		kind, ok := ParseKind(k)
		if !ok {
			return nil, fmt.Errorf("%q: want one of %s", k, KindNames())
		}
		out = append(out, kind)
	}
	return out, nil
}

// ListWindow checks the provider a findings list names against Providers
// and reads its --from and --to in that provider's zone (UTC without one;
// schedule.ListWindow): the window of evidence times the list selects on.
// An unknown provider or a bad time is a *schedule.FlagError naming the
// flag.
func ListWindow(ctx context.Context, c Counter, zones map[string]*time.Location, provider, from, to string) (time.Time, time.Time, error) {
	zone := time.UTC
	if provider != "" {
		known, err := Providers(ctx, c, zones)
		if err != nil {
			return time.Time{}, time.Time{}, err
		}
		z, ok := known[provider]
		if !ok {
			return time.Time{}, time.Time{}, schedule.Flagf("provider", "--provider %q: unknown provider (want one of %s)", provider,
				strings.Join(ProviderNames(known), ", "))
		}
		zone = z
	}
	return schedule.ListWindow(from, to, zone)
}

// CloseZones are the providers a close report covers with their zones
// (Providers): all of them, or only provider when it is set.
func CloseZones(ctx context.Context, c Counter, zones map[string]*time.Location, provider string) (map[string]*time.Location, error) {
	known, err := Providers(ctx, c, zones)
	if err != nil || provider == "" {
		return known, err
	}
	return map[string]*time.Location{provider: known[provider]}, nil
}
