package main

import (
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

// Output formats (-format).
const (
	formatDocker     = "docker"      // docker load's tarball: one image
	formatOCI        = "oci"         // an OCI image layout directory
	formatOCIArchive = "oci-archive" // that directory as a tarball
)

// target is one -bin: a binary and the platform it was named for.
type target struct {
	platform *v1.Platform // nil: the binary's own
	bin      string
}

// binFlag collects -bin FILE and -bin linux/ARCH[/VARIANT]=FILE.
type binFlag []target

func (b *binFlag) String() string {
	var s []string
	for _, t := range *b {
		if t.platform != nil {
			s = append(s, platformString(*t.platform)+"="+t.bin)
		} else {
			s = append(s, t.bin)
		}
	}
	return strings.Join(s, ",")
}

// Set takes FILE, or PLATFORM=FILE where PLATFORM is linux/ARCH or
// linux/ARCH/VARIANT (a FILE with "=" in it needs ./ in front).
func (b *binFlag) Set(s string) error {
	spec, file, ok := strings.Cut(s, "=")
	if !ok || !strings.HasPrefix(spec, "linux/") {
		*b = append(*b, target{bin: s})
		return nil
	}
	p, err := v1.ParsePlatform(spec)
	if err != nil {
		return err
	}
	switch {
	case p.Architecture != "amd64" && p.Architecture != "arm64":
		return fmt.Errorf("platform %s: want linux/amd64 or linux/arm64", spec)
	case p.Variant != "" && (p.Architecture != "arm64" || p.Variant != "v8"):
		return fmt.Errorf("platform %s: the only variant is linux/arm64/v8", spec)
	case p.OSVersion != "" || len(p.Features) > 0 || len(p.OSFeatures) > 0:
		return fmt.Errorf("platform %s: want OS/ARCH[/VARIANT]", spec)
	case file == "":
		return fmt.Errorf("-bin %s: no file after =", s)
	}
	*b = append(*b, target{platform: p, bin: file})
	return nil
}

// platformString writes p as linux/arm64/v8.
func platformString(p v1.Platform) string {
	s := p.OS + "/" + p.Architecture
	if p.Variant != "" {
		s += "/" + p.Variant
	}
	return s
}

// platformImage is one image of an index.
type platformImage struct {
	platform v1.Platform
	img      v1.Image
}

func run(o options, targets []target, format, out, tag string, epoch int64) error {
	if len(targets) == 0 || out == "" {
		return errors.New("-bin and -out are required")
	}
	if flag.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q", flag.Args())
	}
	if format == "" {
		format = formatDocker
		if len(targets) > 1 {
			format = formatOCI
		}
	}
	switch format {
	case formatDocker:
		if len(targets) > 1 {
			return errors.New("-format docker holds one platform (docker load takes one); for several -bin use -format oci or oci-archive")
		}
	case formatOCI, formatOCIArchive:
		o.oci = true
	default:
		return fmt.Errorf("-format %q: want docker, oci or oci-archive", format)
	}
	ref, err := name.NewTag(tag)
	if err != nil {
		return fmt.Errorf("-tag %q: %w", tag, err)
	}
	o.created = time.Unix(epoch, 0).UTC()
	images, err := buildAll(o, targets)
	if err != nil {
		return err
	}
	switch format {
	case formatDocker:
		if err := tarball.WriteToFile(out, ref, images[0].img); err != nil {
			return fmt.Errorf("writing %s: %w", out, err)
		}
		return nil
	case formatOCI:
		return writeLayout(out, ref, images)
	default:
		return writeLayoutArchive(out, ref, images, o.created)
	}
}

// buildAll builds the image of each target, ordered by platform.
func buildAll(o options, targets []target) ([]platformImage, error) {
	var images []platformImage
	for _, t := range targets {
		ot := o
		ot.bin, ot.platform = t.bin, t.platform
		img, err := build(ot)
		if err != nil {
			return nil, err
		}
		cf, err := img.ConfigFile()
		if err != nil {
			return nil, err
		}
		p := *cf.Platform()
		if i := slices.IndexFunc(images, func(pi platformImage) bool { return pi.platform.Equals(p) }); i >= 0 {
			return nil, fmt.Errorf("two binaries for %s: %s and %s", platformString(p), targets[i].bin, t.bin)
		}
		images = append(images, platformImage{platform: p, img: img})
	}
	slices.SortFunc(images, func(a, b platformImage) int {
		return strings.Compare(platformString(a.platform), platformString(b.platform))
	})
	return images, nil
}

// index puts images in an OCI image index, each under its platform.
func index(images []platformImage) v1.ImageIndex {
	adds := make([]mutate.IndexAddendum, len(images))
	for i, pi := range images {
		p := pi.platform
		adds[i] = mutate.IndexAddendum{Add: pi.img, Descriptor: v1.Descriptor{Platform: &p}}
	}
	return mutate.AppendManifests(empty.Index, adds...)
}

// writeLayout writes images as an OCI image layout in dir: its index.json
// names one image index, tagged ref, which holds the images (as `docker
// buildx build --output type=oci` lays them out). A directory that is
// already an image layout (it has an oci-layout file) is replaced; any other
// that is not empty is an error.
func writeLayout(dir string, ref name.Tag, images []platformImage) error {
	entries, err := os.ReadDir(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return err
	case len(entries) == 0:
	default:
		if _, err := os.Stat(filepath.Join(dir, "oci-layout")); err != nil {
			return fmt.Errorf("-out %s: a directory that is not empty and not an OCI image layout", dir)
		}
		if err := os.RemoveAll(dir); err != nil {
			return err
		}
	}
	top := mutate.AppendManifests(empty.Index, mutate.IndexAddendum{
		Add: index(images),
		Descriptor: v1.Descriptor{Annotations: map[string]string{
			// skopeo's oci:DIR:TAG and podman read the first, containerd
			// (ctr import, docker load with its image store) the second.
			"org.opencontainers.image.ref.name": ref.TagStr(),
			"io.containerd.image.name":          containerdName(ref),
		}},
	})
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	if _, err := layout.Write(dir, top); err != nil {
		return fmt.Errorf("writing %s: %w", dir, err)
	}
	return nil
}

// containerdName is ref in full as containerd and Docker write it:
// docker.io/library/inferno:dev for inferno:dev.
func containerdName(ref name.Tag) string {
	reg := ref.RegistryStr()
	if reg == name.DefaultRegistry {
		reg = "docker.io"
	}
	return reg + "/" + ref.RepositoryStr() + ":" + ref.TagStr()
}

// writeLayoutArchive writes the layout of writeLayout as a tarball at out,
// every entry stamped with created, in a fixed order.
func writeLayoutArchive(out string, ref name.Tag, images []platformImage, created time.Time) error {
	dir, err := os.MkdirTemp("", "inferno-oci-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	if err := writeLayout(dir, ref, images); err != nil {
		return err
	}
	var files []file
	err = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == dir {
			return err
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			files = append(files, file{path: rel + "/", mode: 0o755})
			return nil
		}
		data, err := os.ReadFile(p)
		files = append(files, file{path: rel, mode: 0o644, data: data})
		return err
	})
	if err != nil {
		return err
	}
	tarData, err := tarFiles(files, created)
	if err != nil {
		return err
	}
	tmp := out + ".tmp"
	if err := os.WriteFile(tmp, tarData, 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, out)
}
