// Package family is the registry of the model architectures inferno runs.
//
// Each architecture's package (model/qwen3, model/llama, ...) describes
// itself in one Family and registers it from its init function; package
// model imports every architecture package, so a program that opens models
// has them all. The rest of the repository reads the registry and names no
// architecture: model.Open finds the reader of a file's
// general.architecture, convert the family of a checkpoint's
// config.json "architectures", synth the shape behind a preset name,
// quantize the rules that depend on the architecture, the server the chat
// format of the model it serves, and the commands' help the list of what
// runs.
//
// A family is an architecture as llama.cpp's GGUF files name it. Its
// forward pass is described by package arch (arch.Config: the
// hyperparameters and options; arch.Plan; arch.Weights by role), which the
// backends execute without knowing the family.
package family

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"

	"inferno/arch"
	"inferno/gguf"
)

// Family is one architecture: everything inferno knows of it outside the
// forward pass, which arch describes.
type Family struct {
	// Name is general.architecture in its GGUF files ("qwen3"), the prefix
	// of their metadata keys.
	Name string
	// Title names it in messages and help ("Qwen3").
	Title string

	// Config reads a model's configuration from its GGUF metadata and
	// sets the family's options (arch.ReadConfig does the common part).
	// The result is validated.
	Config func(f *gguf.File) (arch.Config, error)
	// Options sets the family's options on a configuration whose
	// hyperparameters are filled in: what Config does after reading the
	// keys. Synth builds its presets' configurations with it.
	Options func(c *arch.Config)

	// Checkpoints are the Hugging Face architectures (config.json's
	// "architectures") that convert writes as files of this family.
	Checkpoints []Checkpoint
	// Presets are the shapes synth writes, smallest first: configurations
	// of this family, to which Register applies Options.
	Presets []Preset
	// Quant holds what quantize's rules read of the family.
	Quant Quant
	// Chat is how the family's instruction-tuned models converse.
	Chat Chat
	// Pre lists the tokenizer.ggml.pre values of the family's released
	// files, as llama.cpp's converter writes them (none for a
	// SentencePiece vocabulary, which has no pre-tokenizer).
	Pre []string
}

// Preset is a model shape synth writes: a configuration of the family
// (its hyperparameters, RoPE and options; Config.Arch is the family's
// name) and what it stands for.
type Preset struct {
	// Name is what synth --preset takes ("0.6b", "llama3-8b").
	Name string
	// Doc says which released model has this shape.
	Doc    string
	Config arch.Config
}

// Quant is what llama-quantize's rules read of an architecture.
type Quant struct {
	// Is70B reports whether llama.cpp's loader gives a model of these
	// layer and head counts the type LLM_TYPE_70B, the only model type
	// llama-quantize's rules read; nil: never.
	Is70B func(layers, heads, kvHeads int) bool
}

// Chat is how a family's instruction-tuned models converse.
type Chat struct {
	// EOG are the texts of the tokens that end a reply, besides the
	// file's eos token: chat terminators such as Qwen's <|im_end|>. Those
	// the vocabulary lacks are ignored.
	EOG []string
	// Reply names the format of replies (package parser): how reasoning
	// and tool calls appear in the generated text. Empty: plain text.
	Reply string
	// Replies overrides Reply for the models whose vocabulary has a
	// token: token text → format. Mistral's llama files, whose
	// tokenizer has [TOOL_CALLS], reply in Mistral's format.
	Replies map[string]string
	// Template is the chat template used when a file carries none;
	// empty: package chat's default (ChatML).
	Template string
	// TemplateFor, when not nil, chooses the template of a file that
	// carries none by its vocabulary (has) and tokenizer.ggml.pre; ""
	// falls back to Template.
	TemplateFor func(has func(token string) bool, pre string) string
}

// DefaultTemplate returns the chat template of a model of the family
// whose file carries none: TemplateFor's choice, else Template.
func (c *Chat) DefaultTemplate(has func(token string) bool, pre string) string {
	if c.TemplateFor != nil {
		if t := c.TemplateFor(has, pre); t != "" {
			return t
		}
	}
	return c.Template
}

var (
	mu       sync.RWMutex
	families = map[string]*Family{}
)

// Register adds f to the registry, after applying f.Options to its
// presets' configurations. It panics if f is incomplete or its
// name, a checkpoint's or a preset's is taken: registration happens in
// init functions, where such a mistake is the program's.
func Register(f *Family) {
	mu.Lock()
	defer mu.Unlock()
	if err := f.check(); err != nil {
		panic("family.Register: " + err.Error())
	}
	if _, dup := families[f.Name]; dup {
		panic("family.Register: " + f.Name + " registered twice")
	}
	for _, g := range families {
		for _, c := range f.Checkpoints {
			if _, ok := g.checkpoint(c.HF); ok {
				panic("family.Register: checkpoint " + c.HF + " of " + f.Name + " is also " + g.Name + "'s")
			}
		}
		for _, p := range f.Presets {
			if _, ok := g.preset(p.Name); ok {
				panic("family.Register: preset " + p.Name + " of " + f.Name + " is also " + g.Name + "'s")
			}
		}
	}
	families[f.Name] = f
}

func (f *Family) check() error {
	switch {
	case f.Name == "" || f.Title == "":
		return fmt.Errorf("a family needs a name and a title (%q, %q)", f.Name, f.Title)
	case f.Config == nil || f.Options == nil:
		return fmt.Errorf("%s: no configuration reader or options", f.Name)
	}
	for i := range f.Presets {
		p := &f.Presets[i]
		f.Options(&p.Config)
		if p.Config.Arch != f.Name {
			return fmt.Errorf("%s: preset %s is a %q configuration", f.Name, p.Name, p.Config.Arch)
		}
		if err := p.Config.Validate(); err != nil {
			return fmt.Errorf("%s: preset %s: %w", f.Name, p.Name, err)
		}
	}
	return nil
}

// ReplyFormat returns the format of the replies of a model of the family
// whose vocabulary has the tokens for which has reports true: the first,
// in token order, of Replies' formats whose token it has, else Reply.
func (c *Chat) ReplyFormat(has func(token string) bool) string {
	for _, tok := range slices.Sorted(maps.Keys(c.Replies)) {
		if has(tok) {
			return c.Replies[tok]
		}
	}
	return c.Reply
}

// Lookup returns the family of general.architecture name.
func Lookup(name string) (*Family, bool) {
	mu.RLock()
	defer mu.RUnlock()
	f, ok := families[name]
	return f, ok
}

// All returns the registered families sorted by name.
func All() []*Family {
	mu.RLock()
	defer mu.RUnlock()
	fs := make([]*Family, 0, len(families))
	for _, f := range families {
		fs = append(fs, f)
	}
	slices.SortFunc(fs, func(a, b *Family) int { return strings.Compare(a.Name, b.Name) })
	return fs
}

// Names returns the registered families' names, quoted, sorted and joined
// by ", ", for messages.
func Names() string {
	var names []string
	for _, f := range All() {
		names = append(names, strconv.Quote(f.Name))
	}
	return strings.Join(names, ", ")
}

// Titles returns the registered families' titles, sorted by name and
// joined by ", ", for help texts.
func Titles() string {
	var t []string
	for _, f := range All() {
		t = append(t, f.Title)
	}
	return strings.Join(t, ", ")
}

// ByCheckpoint returns the family that converts Hugging Face architecture
// hf, and its checkpoint description.
func ByCheckpoint(hf string) (*Family, *Checkpoint, bool) {
	for _, f := range All() {
		if c, ok := f.checkpoint(hf); ok {
			return f, c, true
		}
	}
	return nil, nil, false
}

func (f *Family) checkpoint(hf string) (*Checkpoint, bool) {
	for i := range f.Checkpoints {
		if f.Checkpoints[i].HF == hf {
			return &f.Checkpoints[i], true
		}
	}
	return nil, false
}

// CheckpointNames returns every registered Hugging Face architecture,
// sorted and joined by ", ", for messages.
func CheckpointNames() string {
	var names []string
	for _, f := range All() {
		for _, c := range f.Checkpoints {
			names = append(names, c.HF)
		}
	}
	slices.Sort(names)
	return strings.Join(names, ", ")
}

// LookupPreset returns the preset of that name and its family.
func LookupPreset(name string) (*Family, *Preset, bool) {
	for _, f := range All() {
		if p, ok := f.preset(name); ok {
			return f, p, true
		}
	}
	return nil, nil, false
}

func (f *Family) preset(name string) (*Preset, bool) {
	for i := range f.Presets {
		if f.Presets[i].Name == name {
			return &f.Presets[i], true
		}
	}
	return nil, false
}

// PresetNames returns every preset's name: the families in name order,
// each family's presets in its order.
func PresetNames() []string {
	var names []string
	for _, f := range All() {
		for _, p := range f.Presets {
			names = append(names, p.Name)
		}
	}
	return names
}

// ForPre returns the family whose files carry tokenizer.ggml.pre value
// pre, if one lists it.
func ForPre(pre string) (*Family, bool) {
	for _, f := range All() {
		if slices.Contains(f.Pre, pre) {
			return f, true
		}
	}
	return nil, false
}
