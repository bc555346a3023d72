package main

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"reflect"
	"slices"
	"strings"

	"github.com/go-viper/mapstructure/v2"
	"github.com/spf13/cobra"
	"github.com/spf13/viper"

	"github.com/reconcilehq/reconcile/internal/database"
)

// Config is the whole configuration. Precedence: flags > RECONCILE_*
// environment variables > config file > defaults. Every key is documented in
// config.example.yaml.
type Config struct {
	// DatabaseURL is postgres://... or sqlite:PATH; default sqlite:reconcile.db.
	DatabaseURL string         `mapstructure:"database_url"`
	Database    DatabaseConfig `mapstructure:"database"`
	Log         LogConfig      `mapstructure:"log"`
}

// DatabaseConfig tunes the database connection.
type DatabaseConfig struct {
	// MaxConns is the PostgreSQL pool size; 0 means pgx's default (max(4, CPUs)).
	MaxConns int32 `mapstructure:"max_conns"`
}

// LogConfig sets up logging.
type LogConfig struct {
	// Level is debug, info, warn or error; default info.
	Level string `mapstructure:"level"`
	// Format is text, json or auto (text on a terminal, JSON otherwise).
	Format string `mapstructure:"format"`
}

func (c LogConfig) level() slog.Level {
	var l slog.Level
	_ = l.UnmarshalText([]byte(c.Level)) // validated at load
	return l
}

// defaults are every key with its default value; listing every key also lets
// RECONCILE_* variables reach keys the config file does not mention.
var defaults = map[string]any{
	"database_url":       database.DefaultURL,
	"database.max_conns": 0,
	"log.level":          "info",
	"log.format":         "auto",
}

// secretKeys may only come from the environment.
var secretKeys = []string{}

func envName(key string) string {
	return "RECONCILE_" + strings.ToUpper(strings.NewReplacer(".", "_").Replace(key))
}

// loadConfig reads the config file, the environment and the flags, then
// validates.
func loadConfig(cmd *cobra.Command, file string) (*Config, error) {
	v := viper.New()
	for k, d := range defaults {
		v.SetDefault(k, d)
	}
	v.SetEnvPrefix("RECONCILE")
	v.SetEnvKeyReplacer(strings.NewReplacer(".", "_"))
	v.AutomaticEnv()
	if f := cmd.Flags().Lookup("database-url"); f != nil {
		if err := v.BindPFlag("database_url", f); err != nil {
			return nil, err
		}
	}
	switch {
	case file != "":
		v.SetConfigFile(file)
		if err := v.ReadInConfig(); err != nil {
			return nil, fmt.Errorf("config %s: %w", file, err)
		}
	default:
		if _, err := os.Stat("config.yaml"); err == nil {
			v.SetConfigFile("config.yaml")
			if err := v.ReadInConfig(); err != nil {
				return nil, fmt.Errorf("config config.yaml: %w", err)
			}
		}
	}
	for _, k := range secretKeys {
		if v.InConfig(k) {
			return nil, fmt.Errorf("config %s: %s is a secret and is read only from the environment (%s)",
				v.ConfigFileUsed(), k, envName(k))
		}
	}
	if err := unknownKeys(v); err != nil {
		return nil, err
	}
	var cfg Config
	if err := v.Unmarshal(&cfg, viper.DecodeHook(mapstructure.ComposeDecodeHookFunc(
		mapstructure.StringToTimeDurationHookFunc(),
		mapstructure.StringToSliceHookFunc(","),
	))); err != nil {
		return nil, fmt.Errorf("config: %w", err)
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return &cfg, nil
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

// Validate checks every setting and names the key at fault.
func (c *Config) Validate() error {
	var errs []error
	bad := func(key, format string, args ...any) {
		errs = append(errs, fmt.Errorf("config %s: %s", key, fmt.Sprintf(format, args...)))
	}
	if _, err := database.Engine(c.DatabaseURL); err != nil {
		bad("database_url", "%v", err)
	}
	if c.Database.MaxConns < 0 {
		bad("database.max_conns", "must not be negative")
	}
	var l slog.Level
	if err := l.UnmarshalText([]byte(c.Log.Level)); err != nil {
		bad("log.level", "unknown level %q (want debug, info, warn or error)", c.Log.Level)
	}
	if !slices.Contains([]string{"auto", "text", "json"}, c.Log.Format) {
		bad("log.format", "unknown format %q (want auto, text or json)", c.Log.Format)
	}
	return errors.Join(errs...)
}

// secretValues lists the configured secrets and the database password, for
// scrubbing error text.
func (c *Config) secretValues() []string {
	var out []string
	if u := c.DatabaseURL; u != "" && database.Redact(u) != u {
		out = append(out, u)
	}
	return out
}
