package config

import (
	"fmt"
	"os"
	"reflect"
	"slices"
	"strings"

	"github.com/go-viper/mapstructure/v2"
	"github.com/spf13/viper"

	"github.com/reconcilehq/reconcile/internal/database"
)

// registerDefaults gives viper every key of the configuration with its
// default (the fields of def, walked by their mapstructure names), so that a
// RECONCILE_* variable reaches any key, also one the config file does not
// mention. Nil lists and maps are registered empty. Lists and maps of
// sections (statements, schedules) come from the config file only.
func registerDefaults(v *viper.Viper, def reflect.Value, prefix string) {
	t := def.Type()
	for i := range t.NumField() {
		f := t.Field(i)
		name := f.Tag.Get("mapstructure")
		if name == "" || name == "-" {
			continue
		}
		key, val := prefix+name, def.Field(i)
		switch k := f.Type.Kind(); {
		case k == reflect.Struct:
			registerDefaults(v, val, key+".")
		case (k == reflect.Slice || k == reflect.Map) && f.Type.Elem().Kind() == reflect.Struct:
		case k == reflect.Slice && val.IsNil():
			v.SetDefault(key, reflect.MakeSlice(f.Type, 0, 0).Interface())
		case k == reflect.Map && val.IsNil():
			v.SetDefault(key, reflect.MakeMap(f.Type).Interface())
		default:
			v.SetDefault(key, val.Interface())
		}
	}
}

// SecretKeys lists the keys that may only come from the environment: those
// whose field is tagged secret:"env".
func SecretKeys() []string { return slices.Clone(secretKeys) }

// secretKeys are the keys of SecretKeys.
var secretKeys = func() []string {
	var out []string
	var walk func(t reflect.Type, prefix string)
	walk = func(t reflect.Type, prefix string) {
		for i := range t.NumField() {
			f := t.Field(i)
			name := f.Tag.Get("mapstructure")
			switch {
			case name == "" || name == "-":
			case f.Tag.Get("secret") == "env":
				out = append(out, prefix+name)
			case f.Type.Kind() == reflect.Struct:
				walk(f.Type, prefix+name+".")
			}
		}
	}
	walk(reflect.TypeFor[Config](), "")
	return out
}()

// EnvName is the environment variable of a key: RECONCILE_ and the key in
// upper case, dots as underscores.
func EnvName(key string) string {
	return "RECONCILE_" + strings.ToUpper(strings.NewReplacer(".", "_").Replace(key))
}

// Source says where the configuration comes from besides the environment
// and the defaults.
type Source struct {
	// File is the config file; "" reads ./config.yaml when it exists.
	File string
	// DatabaseURL, when set, is the --database-url flag: it overrides the
	// environment and the file.
	DatabaseURL string
}

// Load reads the config file, the environment and the flags over the
// defaults. It refuses what it cannot read (a malformed file, an unknown
// key, a secret in the file); what the values say is Validate's to check.
func Load(src Source) (Config, error) {
	v := viper.New()
	registerDefaults(v, reflect.ValueOf(Default()), "")
	v.SetEnvPrefix("RECONCILE")
	v.SetEnvKeyReplacer(strings.NewReplacer(".", "_"))
	v.AutomaticEnv()
	if src.DatabaseURL != "" {
		v.Set("database_url", src.DatabaseURL)
	}
	file := src.File
	switch {
	case file != "":
		v.SetConfigFile(file)
		if err := v.ReadInConfig(); err != nil {
			return Config{}, fmt.Errorf("config %s: %w", file, err)
		}
	default:
		if _, err := os.Stat("config.yaml"); err == nil {
			v.SetConfigFile("config.yaml")
			if err := v.ReadInConfig(); err != nil {
				return Config{}, fmt.Errorf("config config.yaml: %w", err)
			}
		}
	}
	for _, k := range secretKeys {
		if v.InConfig(k) {
			return Config{}, fmt.Errorf("config %s: %s is a secret and is read only from the environment (%s)",
				v.ConfigFileUsed(), k, EnvName(k))
		}
	}
	if err := accountSecretsInFile(v); err != nil {
		return Config{}, err
	}
	if err := unknownKeys(v); err != nil {
		return Config{}, err
	}
	var cfg Config
	if err := v.Unmarshal(&cfg, viper.DecodeHook(mapstructure.ComposeDecodeHookFunc(
		mapstructure.StringToTimeDurationHookFunc(),
		mapstructure.StringToSliceHookFunc(","),
	)), func(dc *mapstructure.DecoderConfig) {
		// Keys inside lists and maps (statements, schedules) are checked here.
		dc.ErrorUnused = true
	}); err != nil {
		return Config{}, fmt.Errorf("config %s: %w", v.ConfigFileUsed(), err)
	}
	cfg.Providers.Mpesa.loadAccountSecrets()
	cfg.Providers.Stripe.loadAccountSecrets()
	// Severity channels' webhooks are secrets named after their channel,
	// so no key reaches them: they are read here, once.
	for _, ch := range cfg.Alerts.SeverityChannels {
		if u := os.Getenv(webhookEnv(ch)); u != "" {
			if cfg.Alerts.ChannelWebhooks == nil {
				cfg.Alerts.ChannelWebhooks = map[string]string{}
			}
			cfg.Alerts.ChannelWebhooks[ch] = u
		}
	}
	return cfg, nil
}

// unknownKeys refuses keys in the config file that the configuration does
// not have, so a typo fails instead of being ignored.
func unknownKeys(v *viper.Viper) error {
	if v.ConfigFileUsed() == "" {
		return nil
	}
	known := map[string]bool{}
	collectKeys(reflect.TypeFor[Config](), "", known)
	for _, k := range v.AllKeys() {
		if !v.InConfig(k) {
			continue
		}
		if !known[k] && !knownPrefix(known, k) {
			return fmt.Errorf("config %s: unknown key %s", v.ConfigFileUsed(), k)
		}
	}
	return nil
}

// knownPrefix allows free-form maps (keys below a map-typed key).
func knownPrefix(known map[string]bool, k string) bool {
	for p := range known {
		if strings.HasSuffix(p, ".*") && strings.HasPrefix(k, strings.TrimSuffix(p, "*")) {
			return true
		}
	}
	return false
}

func collectKeys(t reflect.Type, prefix string, out map[string]bool) {
	for i := range t.NumField() {
		f := t.Field(i)
		name := f.Tag.Get("mapstructure")
		if name == "" || name == "-" {
			continue
		}
		key := prefix + name
		switch f.Type.Kind() {
		case reflect.Struct:
			collectKeys(f.Type, key+".", out)
		case reflect.Map:
			out[key] = true
			out[key+".*"] = true
			if f.Type.Elem().Kind() == reflect.Struct {
				collectKeys(f.Type.Elem(), key+".*.", out)
			}
		default:
			out[key] = true
		}
	}
}

// LoadChecked loads the configuration (Load) and checks it (Validate); with
// deliver, as for `reconcile serve`, it checks the secrets delivering needs
// too (ValidateDelivery).
func LoadChecked(src Source, deliver bool) (Config, error) {
	c, err := Load(src)
	if err != nil {
		return c, err
	}
	if err := c.Validate(); err != nil {
		return c, err
	}
	if deliver {
		if err := c.ValidateDelivery(); err != nil {
			return c, err
		}
	}
	return c, nil
}

// DefaultDatabase reports whether nothing chose c's database: no flag
// (src.DatabaseURL), no RECONCILE_DATABASE_URL and no file named one.
func (src Source) DefaultDatabase(c Config) bool {
	_, fromEnv := os.LookupEnv("RECONCILE_DATABASE_URL")
	return src.DatabaseURL == "" && c.DatabaseURL == database.DefaultURL && !fromEnv
}

// Redact replaces in s every secret value (SecretValues) of six bytes or
// more, the database URLs and their passwords among them.
func (c Config) Redact(s string) string {
	for _, v := range c.SecretValues() {
		if len(v) >= 6 {
			s = strings.ReplaceAll(s, v, "[redacted]")
		}
	}
	return s
}

// SecretValues lists the configured secrets and the database password, for
// scrubbing error text.
func (c Config) SecretValues() []string {
	var out []string
	for _, u := range []string{c.DatabaseURL, c.DatabaseReadURL} {
		if u != "" && database.Redact(u) != u {
			out = append(out, u)
			if p := database.Password(u); p != "" {
				out = append(out, p)
			}
		}
	}
	for _, k := range secretKeys {
		var vs []string
		switch v := c.value(k).Interface().(type) {
		case string:
			vs = []string{v}
		case []string:
			vs = v
		}
		for _, v := range vs {
			if v != "" {
				out = append(out, v)
			}
		}
	}
	for _, u := range c.Alerts.ChannelWebhooks {
		out = append(out, u)
	}
	for _, s := range slices.Concat(c.Providers.Mpesa.accountSecrets(), c.Providers.Stripe.accountSecrets()) {
		if s != "" {
			out = append(out, s)
		}
	}
	return out
}

// value is the setting at key (a dotted mapstructure path, such as
// providers.stripe.api_key), or the zero Value when there is none.
func (c *Config) value(key string) reflect.Value {
	v := reflect.ValueOf(c).Elem()
	for _, name := range strings.Split(key, ".") {
		if v.Kind() != reflect.Struct {
			return reflect.Value{}
		}
		t, found := v.Type(), false
		for i := range t.NumField() {
			if t.Field(i).Tag.Get("mapstructure") == name {
				v, found = v.Field(i), true
				break
			}
		}
		if !found {
			return reflect.Value{}
		}
	}
	return v
}
