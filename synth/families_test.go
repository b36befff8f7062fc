package synth

// Synth reads its presets from the registry, which the model packages
// fill.
import (
	"inferno/arch"
	"inferno/family"
	_ "inferno/model"
)

// presetConfig returns the configuration of the registered preset name.
func presetConfig(name string) *arch.Config {
	_, p, ok := family.LookupPreset(name)
	if !ok {
		panic("no preset " + name)
	}
	return &p.Config
}
