package main

import (
	"errors"
	"fmt"
	"os"
	"sort"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"go.yaml.in/yaml/v3"
)

// configFile is --config: a YAML file of flag values.
var configFile string

// addConfigFlags gives every command --config and the INFERNO_*
// environment variables: a flag not given on the command line takes the
// variable INFERNO_<FLAG> (upper case, dashes as underscores:
// INFERNO_KV_MEM for --kv-mem), else the config file's key of the flag's
// name, else its default.
func addConfigFlags(root *cobra.Command) {
	root.PersistentFlags().StringVar(&configFile, "config", "", "read flag values from this YAML file, keys the flags' names (kv-mem: 4GiB); the command line comes first, then INFERNO_* environment variables (INFERNO_KV_MEM), then the file (also $INFERNO_CONFIG)")
	root.PersistentPreRunE = func(cmd *cobra.Command, args []string) error {
		return applySettings(cmd.Flags(), cmd.CommandPath(), os.LookupEnv, configFile)
	}
}

// envName is the environment variable of flag name.
func envName(name string) string {
	return "INFERNO_" + strings.ToUpper(strings.ReplaceAll(name, "-", "_"))
}

// applySettings sets the flags of fs not given on the command line from
// the environment (lookup), then from the YAML file (file, or
// $INFERNO_CONFIG when empty; none when both are). A key of the file
// that names no flag of the command (cmd, for errors) is an error, as is
// a value a flag refuses.
func applySettings(fs *pflag.FlagSet, cmd string, lookup func(string) (string, bool), file string) error {
	if file == "" {
		file, _ = lookup("INFERNO_CONFIG")
	}
	var values map[string]any
	if file != "" {
		data, err := os.ReadFile(file)
		if err != nil {
			return fmt.Errorf("--config: %w", err)
		}
		if err := yaml.Unmarshal(data, &values); err != nil {
			return fmt.Errorf("--config %s: %w", file, err)
		}
		var unknown []string
		for k := range values {
			if f := fs.Lookup(k); f == nil || k == "config" {
				unknown = append(unknown, k)
			}
		}
		if len(unknown) > 0 {
			sort.Strings(unknown)
			return fmt.Errorf("--config %s: %s takes no flag %s", file, cmd, strings.Join(unknown, ", "))
		}
	}
	var errs []error
	fs.VisitAll(func(f *pflag.Flag) {
		if f.Changed || f.Name == "config" || f.Name == "help" {
			return
		}
		if v, ok := lookup(envName(f.Name)); ok {
			if err := f.Value.Set(v); err != nil {
				errs = append(errs, fmt.Errorf("%s=%q: %w", envName(f.Name), v, err))
			}
			return
		}
		v, ok := values[f.Name]
		if !ok || v == nil {
			return
		}
		if err := setFromYAML(f, v); err != nil {
			errs = append(errs, fmt.Errorf("--config %s: %s: %w", file, f.Name, err))
		}
	})
	return errors.Join(errs...)
}

// setFromYAML sets flag f to the YAML value v: a scalar, or a list for a
// flag that takes several values.
func setFromYAML(f *pflag.Flag, v any) error {
	list, isList := v.([]any)
	if !isList {
		if _, isMap := v.(map[string]any); isMap {
			return errors.New("a mapping is not a flag value")
		}
		return f.Value.Set(fmt.Sprint(v))
	}
	sv, ok := f.Value.(pflag.SliceValue)
	if !ok {
		return fmt.Errorf("a list for a flag of one %s value", f.Value.Type())
	}
	items := make([]string, len(list))
	for i, x := range list {
		if _, isMap := x.(map[string]any); isMap {
			return errors.New("a mapping is not a flag value")
		}
		items[i] = fmt.Sprint(x)
	}
	return sv.Replace(items)
}
