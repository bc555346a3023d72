package mpesa

import (
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"strings"
)

// SafaricomIPs are the addresses Daraja posts callbacks from, as published
// for Safaricom's "Callback and IP Whitelisting" guidance, followed by two
// older addresses kept for backward compatibility.
var SafaricomIPs = []string{
	"196.201.214.200", "196.201.214.206", "196.201.213.114", "196.201.214.207", "196.201.214.208", "196.201.213.44",
	"196.201.212.127", "196.201.212.138", "196.201.212.129", "196.201.212.136", "196.201.212.74", "196.201.212.69",
	"196.201.212.128", "196.201.212.132",
}

// parsePrefixes parses addresses ("196.201.214.200") and CIDR prefixes
// ("196.201.214.0/24", "::/0").
func parsePrefixes(what string, list []string) ([]netip.Prefix, error) {
	out := make([]netip.Prefix, 0, len(list))
	for _, s := range list {
		s = strings.TrimSpace(s)
		if s == "" {
			continue
		}
		if strings.Contains(s, "/") {
			p, err := netip.ParsePrefix(s)
			if err != nil {
				return nil, fmt.Errorf("mpesa: %s: %q is not an address or prefix: %w", what, s, err)
			}
			out = append(out, p.Masked())
			continue
		}
		a, err := netip.ParseAddr(s)
		if err != nil {
			return nil, fmt.Errorf("mpesa: %s: %q is not an address or prefix: %w", what, s, err)
		}
		a = a.Unmap()
		out = append(out, netip.PrefixFrom(a, a.BitLen()))
	}
	return out, nil
}

func contains(list []netip.Prefix, a netip.Addr) bool {
	a = a.Unmap()
	for _, p := range list {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

// parseHostAddr parses "1.2.3.4", "1.2.3.4:5678", "[::1]:5678" or "::1".
func parseHostAddr(s string) (netip.Addr, bool) {
	s = strings.TrimSpace(s)
	if a, err := netip.ParseAddr(s); err == nil {
		return a.Unmap(), true
	}
	if host, _, err := net.SplitHostPort(s); err == nil {
		if a, err := netip.ParseAddr(host); err == nil {
			return a.Unmap(), true
		}
	}
	return netip.Addr{}, false
}

// clientIP finds the address that sent r: the peer, unless the peer is a
// trusted proxy, in which case X-Forwarded-For is walked from the right,
// past every trusted proxy, to the first address that is not one. ok is
// false when an address that must be believed cannot be parsed.
func clientIP(r *http.Request, trusted []netip.Prefix) (netip.Addr, bool) {
	peer, ok := parseHostAddr(r.RemoteAddr)
	if !ok {
		return netip.Addr{}, false
	}
	if len(trusted) == 0 || !contains(trusted, peer) {
		return peer, true
	}
	var hops []string
	for _, h := range r.Header.Values("X-Forwarded-For") {
		hops = append(hops, strings.Split(h, ",")...)
	}
	client := peer
	for i := len(hops) - 1; i >= 0; i-- {
		if !contains(trusted, client) {
			break
		}
		a, ok := parseHostAddr(hops[i])
		if !ok {
			return netip.Addr{}, false
		}
		client = a
	}
	return client, true
}
