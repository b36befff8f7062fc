package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/pflag"
)

// TestSettings: a flag takes the command line's value, else INFERNO_<FLAG>,
// else the config file's, else its default; lists fill flags of several
// values; unknown keys and bad values are errors that name their source.
func TestSettings(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "inferno.yaml")
	if err := os.WriteFile(file, []byte("kv-mem: 4GiB\nparallel: 8\nqueue: 32\nalias: [a, b]\nno-prefix-cache: true\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	newFlags := func() (*pflag.FlagSet, *string, *int, *int, *[]string, *bool) {
		fs := pflag.NewFlagSet("serve", pflag.ContinueOnError)
		mem := fs.String("kv-mem", "", "")
		par := fs.Int("parallel", 0, "")
		queue := fs.Int("queue", 64, "")
		alias := fs.StringArray("alias", nil, "")
		noPrefix := fs.Bool("no-prefix-cache", false, "")
		fs.String("config", "", "")
		return fs, mem, par, queue, alias, noPrefix
	}
	env := map[string]string{"INFERNO_PARALLEL": "12"}
	lookup := func(k string) (string, bool) { v, ok := env[k]; return v, ok }

	fs, mem, par, queue, alias, noPrefix := newFlags()
	if err := fs.Parse([]string{"--queue", "16"}); err != nil {
		t.Fatal(err)
	}
	if err := applySettings(fs, "inferno serve", lookup, file); err != nil {
		t.Fatal(err)
	}
	if *mem != "4GiB" || *par != 12 || *queue != 16 || strings.Join(*alias, ",") != "a,b" || !*noPrefix {
		t.Errorf("kv-mem %q (file), parallel %d (env over file), queue %d (command line over file), alias %v, no-prefix-cache %v",
			*mem, *par, *queue, *alias, *noPrefix)
	}

	// $INFERNO_CONFIG names the file when --config does not.
	env["INFERNO_CONFIG"] = file
	fs, mem, _, _, _, _ = newFlags()
	if err := applySettings(fs, "inferno serve", lookup, ""); err != nil || *mem != "4GiB" {
		t.Errorf("with $INFERNO_CONFIG: kv-mem %q, %v", *mem, err)
	}
	delete(env, "INFERNO_CONFIG")

	// Without file or variables, the defaults.
	fs, _, par, queue, _, _ = newFlags()
	if err := applySettings(fs, "inferno serve", func(string) (string, bool) { return "", false }, ""); err != nil || *par != 0 || *queue != 64 {
		t.Errorf("defaults: parallel %d, queue %d, %v", *par, *queue, err)
	}

	for _, tc := range []struct {
		name, yaml string
		env        map[string]string
		want       string
	}{
		{"unknown key", "kv-men: 4GiB\n", nil, "takes no flag kv-men"},
		{"bad value", "parallel: many\n", nil, "parallel"},
		{"list for one value", "queue: [1, 2]\n", nil, "a list"},
		{"bad variable", "", map[string]string{"INFERNO_QUEUE": "x"}, "INFERNO_QUEUE"},
		{"not YAML", "parallel: [\n", nil, "--config"},
	} {
		f := filepath.Join(dir, strings.ReplaceAll(tc.name, " ", "-")+".yaml")
		if err := os.WriteFile(f, []byte(tc.yaml), 0o644); err != nil {
			t.Fatal(err)
		}
		fs, _, _, _, _, _ := newFlags()
		lk := func(k string) (string, bool) { v, ok := tc.env[k]; return v, ok }
		err := applySettings(fs, "inferno serve", lk, f)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want an error with %q", tc.name, err, tc.want)
		}
	}
}

// FuzzSettings: any config file either sets the flags or is refused with
// an error; it never panics.
func FuzzSettings(f *testing.F) {
	f.Add([]byte("kv-mem: 4GiB\nparallel: 8\nalias: [a, b]\n"))
	f.Add([]byte("parallel: [\n"))
	f.Add([]byte("alias: [{a: 1}]\nqueue: {x: 1}\n"))
	f.Add([]byte("- 1\n- 2\n"))
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, data []byte) {
		file := filepath.Join(dir, "fuzz.yaml")
		if err := os.WriteFile(file, data, 0o644); err != nil {
			t.Fatal(err)
		}
		fs := pflag.NewFlagSet("serve", pflag.ContinueOnError)
		fs.String("kv-mem", "", "")
		fs.Int("parallel", 0, "")
		fs.StringArray("alias", nil, "")
		fs.Bool("no-prefix-cache", false, "")
		_ = applySettings(fs, "inferno serve", func(string) (string, bool) { return "", false }, file)
	})
}
