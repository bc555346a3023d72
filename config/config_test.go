package config

import (
	"bytes"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/spf13/viper"

	"github.com/reconcilehq/reconcile/queue"
)

// load loads the configuration as the commands do, from file (none when
// empty), the environment and the defaults.
func load(t *testing.T, file string) Config {
	t.Helper()
	cfg, err := Load(Source{File: file})
	if err != nil {
		t.Fatal(err)
	}
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	return cfg
}

// parse loads file and validates it, as the commands do.
func parse(file string) (Config, error) {
	cfg, err := Load(Source{File: file})
	if err != nil {
		return cfg, err
	}
	return cfg, cfg.Validate()
}

// writeConfig writes a config file and returns its path.
func writeConfig(t *testing.T, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// docFiles are the pages people read: README.md and docs/*.md.
func docFiles(t *testing.T) []string {
	t.Helper()
	files := []string{"../README.md"}
	more, err := filepath.Glob("../docs/*.md")
	if err != nil {
		t.Fatal(err)
	}
	return append(files, more...)
}

// sameSettings compares two configurations by their settings: an empty
// list or map is the same as none, and what Validate fills in (the
// providers' zones) is not a setting.
func sameSettings(a, b Config) bool {
	norm := func(c *Config) any {
		var walk func(v reflect.Value)
		walk = func(v reflect.Value) {
			switch v.Kind() {
			case reflect.Struct:
				for i := range v.NumField() {
					if v.Type().Field(i).IsExported() {
						walk(v.Field(i))
					}
				}
			case reflect.Slice, reflect.Map:
				if v.Len() == 0 {
					v.SetZero()
				}
			}
		}
		walk(reflect.ValueOf(c).Elem())
		return *c
	}
	return reflect.DeepEqual(norm(&a), norm(&b))
}

// TestDefaultsPinned pins the defaults that matter: changing one is a
// behaviour change and must be deliberate.
func TestDefaultsPinned(t *testing.T) {
	t.Parallel()
	def := Default()
	for key, c := range map[string]struct{ got, want any }{
		"database_url":                         {def.DatabaseURL, "sqlite:reconcile.db"},
		"database_read_url":                    {def.DatabaseReadURL, ""},
		"database_read_max_lag":                {def.DatabaseReadMaxLag, 30 * time.Second},
		"http.listen":                          {def.HTTP.Listen, ":8080"},
		"http.admin_listen":                    {def.HTTP.AdminListen, "127.0.0.1:8081"},
		"workers.charges":                      {def.Workers.Charges, 8},
		"queue.job_timeout":                    {def.Queue.JobTimeout, 90 * time.Second},
		"queue.rescue_after":                   {def.Queue.RescueAfter, 5 * time.Minute},
		"queue.shutdown_grace":                 {def.Queue.ShutdownGrace, 30 * time.Second},
		"queue.retry_base":                     {def.Queue.RetryBase, 2 * time.Second},
		"queue.retry_max":                      {def.Queue.RetryMax, 10 * time.Minute},
		"charges.lease":                        {def.Charges.Lease, 2 * time.Minute},
		"charges.max_attempts":                 {def.Charges.MaxAttempts, 12},
		"charges.pending_give_up":              {def.Charges.PendingGiveUp, 10 * time.Minute},
		"reconcile.tolerance":                  {def.Reconcile.Tolerance, 2 * time.Hour},
		"reconcile.lease":                      {def.Reconcile.Lease, 15 * time.Minute},
		"reconcile.statement_grace":            {def.Reconcile.StatementGrace, 2 * time.Hour},
		"alerts.mode":                          {def.Alerts.Mode, "off"},
		"alerts.zone":                          {def.Alerts.Zone, ""},
		"alerts.max_attempts":                  {def.Alerts.MaxAttempts, 10},
		"console.mode":                         {def.Console.Mode, "off"},
		"providers.mpesa.zone":                 {def.Providers.Mpesa.Zone, "Africa/Nairobi"},
		"providers.mpesa.settlement_grace":     {def.Providers.Mpesa.SettlementGrace, 30 * time.Minute},
		"providers.mpesa.base_url":             {def.Providers.Mpesa.BaseURL, "https://api.safaricom.co.ke"},
		"providers.stripe.zone":                {def.Providers.Stripe.Zone, "UTC"},
		"providers.stripe.settlement_grace":    {def.Providers.Stripe.SettlementGrace, 2 * time.Hour},
		"providers.stripe.max_network_retries": {def.Providers.Stripe.MaxNetworkRetries, 2},
		"providers.stripe.webhook_tolerance":   {def.Providers.Stripe.WebhookTolerance, 5 * time.Minute},
	} {
		if !reflect.DeepEqual(c.got, c.want) {
			t.Errorf("default %s = %v, want %v", key, c.got, c.want)
		}
	}
	if c := Default(); c.Validate() != nil {
		t.Errorf("the defaults do not validate: %v", c.Validate())
	}
	// Loading with nothing set gives the defaults.
	if got := load(t, ""); !sameSettings(got, def) {
		t.Errorf("loaded with nothing set:\n%+v\nwant DefaultConfig:\n%+v", got, def)
	}
}

// TestLibraryDefaultsAgree: a library package left to its own defaults
// behaves as the configuration's defaults say.
func TestLibraryDefaultsAgree(t *testing.T) {
	t.Parallel()
	def := Default()
	var b queue.Backoff // what a caller that sets no backoff gets
	if got := b.Nominal(1); got != def.Queue.RetryBase {
		t.Errorf("queue.Backoff's first wait is %s, the configuration's queue.retry_base %s", got, def.Queue.RetryBase)
	}
	if got := b.Nominal(100); got != def.Queue.RetryMax {
		t.Errorf("queue.Backoff's longest wait is %s, the configuration's queue.retry_max %s", got, def.Queue.RetryMax)
	}
}

// TestEveryKeyReachesViper: every key of Config, down to the nested ones,
// is registered with viper, so that its RECONCILE_* variable is read.
func TestEveryKeyReachesViper(t *testing.T) {
	t.Parallel()
	v := viper.New()
	registerDefaults(v, reflect.ValueOf(Default()), "")
	registered := v.AllKeys()
	for _, e := range configEntries() {
		if e.Section || e.FileOnly {
			continue
		}
		if !slices.Contains(registered, e.Key) {
			t.Errorf("%s is not registered with viper: %s does not reach it", e.Key, EnvName(e.Key))
		}
	}
}

// TestEnvOverrides: RECONCILE_* variables override the file and the
// defaults, for nested keys, durations and lists (comma-separated).
func TestEnvOverrides(t *testing.T) {
	file := writeConfig(t, `charges:
  max_attempts: 3
providers:
  mpesa:
    callbacks:
      read_timeout: 20s
`)
	t.Setenv("RECONCILE_CHARGES_MAX_ATTEMPTS", "5")
	t.Setenv("RECONCILE_PROVIDERS_MPESA_CALLBACKS_READ_TIMEOUT", "7s")
	t.Setenv("RECONCILE_PROVIDERS_MPESA_PULL_MAX_PAGES", "40")
	t.Setenv("RECONCILE_QUEUE_JOB_TIMEOUT", "2m")
	t.Setenv("RECONCILE_CONSOLE_OIDC_SCOPES", "openid,groups")
	t.Setenv("RECONCILE_ALERTS_INTERACTIONS_ALLOWED_USERS", "U0123,U0456")
	t.Setenv("RECONCILE_PROVIDERS_STRIPE_REFERENCE_NORMALISE", "false")
	cfg := load(t, file)
	for key, c := range map[string]struct{ got, want any }{
		"charges.max_attempts":                   {cfg.Charges.MaxAttempts, 5},
		"providers.mpesa.callbacks.read_timeout": {cfg.Providers.Mpesa.Callbacks.ReadTimeout, 7 * time.Second},
		"providers.mpesa.pull.max_pages":         {cfg.Providers.Mpesa.Pull.MaxPages, 40},
		"queue.job_timeout":                      {cfg.Queue.JobTimeout, 2 * time.Minute},
		"console.oidc.scopes":                    {cfg.Console.OIDC.Scopes, []string{"openid", "groups"}},
		"alerts.interactions.allowed_users":      {cfg.Alerts.Interactions.AllowedUsers, []string{"U0123", "U0456"}},
		"providers.stripe.reference_normalise":   {cfg.Providers.Stripe.ReferenceNormalise, false},
		// Untouched keys keep their defaults.
		"queue.rescue_after": {cfg.Queue.RescueAfter, Default().Queue.RescueAfter},
	} {
		if !reflect.DeepEqual(c.got, c.want) {
			t.Errorf("%s = %v, want %v", key, c.got, c.want)
		}
	}
}

// TestConfigDocsGenerated: config.example.yaml and docs/configuration.md
// are what `go generate ./config` makes of the defaults and
// descriptions, every key is described, and the example file is a valid
// config file that sets exactly the defaults.
func TestConfigDocsGenerated(t *testing.T) {
	t.Parallel()
	keys := map[string]bool{}
	for _, e := range configEntries() {
		keys[e.Key] = true
		if strings.TrimSpace(e.Doc) == "" {
			t.Errorf("%s has no description in configDocs (config/docs.go)", e.Key)
		}
		if _, ok := configExamples[e.Key]; ok && !e.FileOnly {
			t.Errorf("configExamples[%s]: only lists and maps of sections (statements, schedules) take an example", e.Key)
		}
	}
	for k := range configDocs {
		if !keys[k] {
			t.Errorf("configDocs describes %s, which is not a key of Config", k)
		}
	}
	for file, want := range map[string][]byte{
		"../config.example.yaml":   ExampleYAML(),
		"../docs/configuration.md": Markdown(),
	} {
		got, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s is stale: run `go generate ./config` and commit the result", strings.TrimPrefix(file, "../"))
		}
	}
	got := load(t, "../config.example.yaml")
	if def := Default(); !sameSettings(got, def) {
		t.Errorf("config.example.yaml does not set the defaults:\n%+v\nwant:\n%+v", got, def)
	}
}

// TestDocsNameRealKeys: the keys README.md and docs/*.md name exist, and a
// default they state beside a key ("`queue.rescue_after` (default 5m)") is
// the default, so prose written by hand cannot drift from DefaultConfig.
func TestDocsNameRealKeys(t *testing.T) {
	t.Parallel()
	entries := configEntries()
	byKey := map[string]configEntry{}
	for _, e := range entries {
		byKey[e.Key] = e
	}
	sections := `(?:` + strings.Join(func() []string {
		var top []string
		for _, e := range entries {
			if e.Depth == 0 {
				top = append(top, regexp.QuoteMeta(e.Key))
			}
		}
		return top
	}(), "|") + `)`
	mention := regexp.MustCompile("`(" + sections + "(?:\\[\\])?(?:\\.[^` /]+)*)(?:/[^`]*)?`")
	stated := regexp.MustCompile("`(" + sections + "[^` ]*)`,? \\(?default:? (?:`([^`]+)`|([0-9]+[smh])\\b)")
	known := func(key string) bool {
		key = strings.ReplaceAll(key, "[]", "")
		if strings.ContainsAny(key, "ABCDEFGHIJKLMNOPQRSTUVWXYZ") || strings.HasSuffix(key, ".sh") || strings.HasSuffix(key, ".env") {
			return true // a file name or a Go identifier, not a key
		}
		parts := strings.Split(key, ".")
		for _, e := range entries {
			kp := strings.Split(e.Key, ".")
			if e.FileOnly && kp[0] == parts[0] {
				return true // keys inside statements and schedules
			}
			if len(kp) != len(parts) {
				continue
			}
			match := true
			for i, p := range parts {
				if p != kp[i] && p != "*" && !strings.HasPrefix(p, "<") {
					match = false
				}
			}
			if match {
				return true
			}
		}
		return false
	}
	for _, file := range docFiles(t) {
		if strings.HasSuffix(file, "configuration.md") {
			continue
		}
		raw, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		text := strings.Join(strings.Fields(string(raw)), " ")
		for _, m := range mention.FindAllStringSubmatch(text, -1) {
			if !known(m[1]) {
				t.Errorf("%s names %s, which is not a key of the configuration", file, m[1])
			}
		}
		for _, m := range stated.FindAllStringSubmatch(text, -1) {
			e, ok := byKey[m[1]]
			if !ok || e.Section || e.Secret {
				continue
			}
			want := strings.Trim(yamlValue(e.Default), `"`)
			if got := m[2] + m[3]; got != want {
				t.Errorf("%s says %s defaults to %s; it is %s", file, m[1], got, want)
			}
		}
	}
}

// TestSecretValuesCoverEverySecret: every secret key names a text or list
// setting, and whatever is set in it is scrubbed from error text.
func TestSecretValuesCoverEverySecret(t *testing.T) {
	t.Parallel()
	cfg := Default()
	var want []string
	for _, k := range secretKeys {
		v := cfg.value(k)
		switch {
		case !v.IsValid():
			t.Errorf("secretKeys names %s, which is not a key of the configuration", k)
		case v.Kind() == reflect.String:
			v.SetString("s3cret-" + k)
			want = append(want, "s3cret-"+k)
		case v.Type() == reflect.TypeFor[[]string]():
			v.Set(reflect.ValueOf([]string{"s3cret-a-" + k, "s3cret-b-" + k}))
			want = append(want, "s3cret-a-"+k, "s3cret-b-"+k)
		default:
			t.Errorf("secret %s is a %s; secrets are text or lists of text", k, v.Type())
		}
	}
	got := cfg.SecretValues()
	for _, w := range want {
		if !slices.Contains(got, w) {
			t.Errorf("secretValues misses %s", w)
		}
	}
}

// TestFieldCommentsStateTheDefaults: a Go comment on a field of the
// configuration that states a number or duration as its default ("default
// 2h", "default 1 MiB") states DefaultConfig's.
func TestFieldCommentsStateTheDefaults(t *testing.T) {
	t.Parallel()
	// The key of each field, by its struct type and mapstructure name.
	keys := map[string]string{}
	var walk func(rt reflect.Type, prefix string)
	walk = func(rt reflect.Type, prefix string) {
		for i := range rt.NumField() {
			f := rt.Field(i)
			name := f.Tag.Get("mapstructure")
			if name == "" || name == "-" {
				continue
			}
			keys[rt.Name()+"."+name] = prefix + name
			if f.Type.Kind() == reflect.Struct {
				walk(f.Type, prefix+name+".")
			}
		}
	}
	walk(reflect.TypeFor[Config](), "")
	def := Default()
	stated := regexp.MustCompile(`(?i)default (\d+)( ?(?:[smh]|MiB|KiB)\b)?`)
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
	fset := token.NewFileSet()
	for _, file := range files {
		if strings.HasSuffix(file, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, file, nil, parser.ParseComments)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			ts, ok := n.(*ast.TypeSpec)
			if !ok {
				return true
			}
			st, ok := ts.Type.(*ast.StructType)
			if !ok {
				return false
			}
			for _, field := range st.Fields.List {
				if field.Doc == nil || field.Tag == nil {
					continue
				}
				tag := reflect.StructTag(strings.Trim(field.Tag.Value, "`")).Get("mapstructure")
				key, ok := keys[ts.Name.Name+"."+tag]
				if !ok {
					continue
				}
				m := stated.FindStringSubmatch(field.Doc.Text())
				if m == nil {
					continue
				}
				n, _ := strconv.Atoi(m[1])
				var want any = n
				switch unit := strings.TrimSpace(m[2]); unit {
				case "s", "m", "h":
					d, _ := time.ParseDuration(m[1] + unit)
					want = d
				case "MiB":
					want = int64(n) << 20
				case "KiB":
					want = int64(n) << 10
				}
				got := def.value(key)
				if fmt.Sprint(got.Interface()) != fmt.Sprint(want) {
					t.Errorf("%s: the comment of %s.%s (%s) says default %s, DefaultConfig says %v",
						fset.Position(field.Pos()), ts.Name.Name, field.Names[0].Name, key, strings.TrimSpace(m[0][len("default "):]), got)
				}
				checked++
			}
			return false
		})
	}
	if checked < 20 {
		t.Errorf("only %d field comments state a default; the pattern no longer finds them", checked)
	}
}

// TestSecretKeysPinned: the secrets, read only from the environment and
// scrubbed from errors, are these (the fields tagged secret:"env").
func TestSecretKeysPinned(t *testing.T) {
	t.Parallel()
	want := []string{"http.api_token", "events.signing_secret", "alerts.bot_token", "alerts.webhook_url",
		"alerts.signing_secret", "console.oidc.client_secret", "console.oidc.session_key",
		"providers.mpesa.consumer_key", "providers.mpesa.consumer_secret", "providers.mpesa.pass_key", "providers.mpesa.security_credential",
		"providers.mpesa.callbacks.path_token", "providers.mpesa.pull.nominated_number",
		"providers.stripe.api_key", "providers.stripe.webhook_secrets", "books.erase_key"}
	if !slices.Equal(secretKeys, want) {
		t.Errorf("secret keys:\n%v\nwant:\n%v", secretKeys, want)
	}
}
