package config

import (
	"os"
	"reflect"
	"sort"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// TestExampleConfig loads config.example.yaml as a user would, and checks that
// it shows every key of the configuration (secrets as environment variables).
func TestExampleConfig(t *testing.T) {
	t.Parallel()
	if _, err := parse("../config.example.yaml"); err != nil {
		t.Fatalf("config.example.yaml does not load: %v", err)
	}
	raw, err := os.ReadFile("../config.example.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := yaml.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	shown := map[string]bool{}
	var walk func(prefix string, v any)
	walk = func(prefix string, v any) {
		shown[strings.TrimSuffix(prefix, ".")] = true
		if m, ok := v.(map[string]any); ok {
			for k, sub := range m {
				walk(prefix+k+".", sub)
			}
		}
	}
	walk("", doc)
	known := map[string]bool{}
	collectKeys(reflect.TypeFor[Config](), "", known)
	var missing []string
	for k := range known {
		if strings.Contains(k, "*") || shown[k] || isSecret(k) {
			continue
		}
		missing = append(missing, k)
	}
	sort.Strings(missing)
	if len(missing) > 0 {
		t.Errorf("config.example.yaml does not show: %s", strings.Join(missing, ", "))
	}
	for _, k := range secretKeys {
		if !strings.Contains(string(raw), EnvName(k)) {
			t.Errorf("config.example.yaml does not name the environment variable of secret %s (%s)", k, EnvName(k))
		}
	}
}

func isSecret(k string) bool {
	for _, s := range secretKeys {
		if s == k {
			return true
		}
	}
	return false
}
