// Package outfile writes a file so that its path never names a partial
// one: the data goes to a temporary file in the destination's folder,
// which is renamed into place once complete and removed on failure.
//
// A temporary file is named ".NAME.PID-RANDOM.tmp" after the destination
// and the writing process. One that a killed process left behind is
// removed when the next file is created in its folder: when its process no
// longer runs, or, for one of an older name without the process
// (".NAME.RANDOM.tmp"), when it was last written to StaleAge ago.
package outfile

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"time"
)

// StaleAge is the age past which a temporary file whose name does not
// say its process is taken as left behind.
const StaleAge = time.Hour

// A File is an output file being written. Write appends to it; Commit
// puts it in place; Abort, or a failed Commit, removes it with the
// folders Create made. Errors name the destination, not the temporary
// file.
type File struct {
	name string   // the destination as given, for messages
	dst  string   // the path renamed onto (symbolic links resolved)
	tmp  *os.File // nil once committed or aborted
	dirs []string // folders Create made, deepest first
	n    int64    // bytes written
}

// Create starts writing the file path. It makes the missing folders of
// path, and refuses a path that exists but is not a regular file (a
// folder, or a device such as /dev/null, which renaming would replace).
// When path is a symbolic link, the file it points to is replaced and the
// link kept.
func Create(path string) (*File, error) {
	f := &File{name: path, dst: path}
	if st, err := os.Lstat(path); err == nil {
		if st.Mode()&fs.ModeSymlink != 0 {
			if f.dst, err = filepath.EvalSymlinks(path); err != nil {
				return nil, fmt.Errorf("output %s: %w", path, unwrapPath(err))
			}
			if st, err = os.Stat(f.dst); err != nil {
				return nil, fmt.Errorf("output %s: %w", path, unwrapPath(err))
			}
		}
		if st.IsDir() {
			return nil, fmt.Errorf("output %s is a folder", path)
		}
		if !st.Mode().IsRegular() {
			return nil, fmt.Errorf("output %s is %s, not a regular file", path, kind(st.Mode()))
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("output %s: %w", path, unwrapPath(err))
	}
	dir := filepath.Dir(f.dst)
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Lstat(d); err == nil || !errors.Is(err, fs.ErrNotExist) {
			break
		}
		f.dirs = append(f.dirs, d)
		if filepath.Dir(d) == d {
			break
		}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		f.removeDirs()
		return nil, fmt.Errorf("output %s: %w", path, unwrapPath(err))
	}
	removeStale(dir)
	tmp, err := os.CreateTemp(dir, fmt.Sprintf(".%s.%d-*.tmp", filepath.Base(f.dst), os.Getpid()))
	if err != nil {
		f.removeDirs()
		return nil, fmt.Errorf("output %s: %w", path, unwrapPath(err))
	}
	f.tmp = tmp
	return f, nil
}

// Write appends p to the file.
func (f *File) Write(p []byte) (int, error) {
	if f.tmp == nil {
		return 0, fmt.Errorf("writing %s: %w", f.name, os.ErrClosed)
	}
	n, err := f.tmp.Write(p)
	f.n += int64(n)
	if err != nil {
		return n, fmt.Errorf("writing %s: %w", f.name, unwrapPath(err))
	}
	return n, nil
}

// TempName returns the path of the temporary file being written, for
// reading the data back before Commit. The file is gone after Commit or
// Abort.
func (f *File) TempName() string {
	if f.tmp == nil {
		return ""
	}
	return f.tmp.Name()
}

// Reserve checks that the file system has room for a file of size
// bytes, so that a file too large fails before it is written rather than
// when the disk is full. It checks nothing where free space is not known.
func (f *File) Reserve(size int64) error {
	free, ok := FreeSpace(filepath.Dir(f.dst))
	if ok && size-f.n > free {
		return fmt.Errorf("writing %s: the file needs %s but its file system has %s free", f.name, bytesString(size), bytesString(free))
	}
	return nil
}

// Commit flushes the file to the disk and renames it into place, mode
// 0644. It removes the file when it fails.
func (f *File) Commit() error {
	if f.tmp == nil {
		return fmt.Errorf("writing %s: %w", f.name, os.ErrClosed)
	}
	err := f.tmp.Sync()
	if err == nil {
		err = f.tmp.Chmod(0o644)
	}
	if cerr := f.tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.tmp.Name(), f.dst)
	}
	if err != nil {
		os.Remove(f.tmp.Name())
		f.tmp = nil
		f.removeDirs()
		return fmt.Errorf("writing %s: %w", f.name, unwrapPath(err))
	}
	f.tmp = nil
	return nil
}

// Abort removes the file and the folders Create made for it. It does
// nothing after Commit or a first Abort, so it can be deferred.
func (f *File) Abort() {
	if f.tmp == nil {
		return
	}
	f.tmp.Close()
	os.Remove(f.tmp.Name())
	f.tmp = nil
	f.removeDirs()
}

// Temporary files' names: with the writer's process id, and the older
// names without it.
var (
	tempName    = regexp.MustCompile(`^\..+\.([0-9]+)-[0-9]+\.tmp$`)
	oldTempName = regexp.MustCompile(`^\..+\.[0-9]+\.tmp$`)
)

// removeStale removes the temporary files in dir that processes killed
// while writing left behind. Errors are ignored: the files are someone
// else's leftovers, and the write goes on without their removal.
func removeStale(dir string) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range entries {
		if !e.Type().IsRegular() {
			continue
		}
		name := e.Name()
		stale := false
		if m := tempName.FindStringSubmatch(name); m != nil {
			pid, err := strconv.Atoi(m[1])
			stale = err == nil && pid != os.Getpid() && !processAlive(pid)
		} else if oldTempName.MatchString(name) {
			info, err := e.Info()
			stale = err == nil && time.Since(info.ModTime()) > StaleAge
		}
		if stale {
			os.Remove(filepath.Join(dir, name))
		}
	}
}

// removeDirs removes the folders Create made, deepest first; a folder
// something else has written into since stays.
func (f *File) removeDirs() {
	for _, d := range f.dirs {
		if os.Remove(d) != nil {
			break
		}
	}
	f.dirs = nil
}

// unwrapPath returns the cause of a path error, whose path (often the
// temporary file's) the messages replace with the destination's.
func unwrapPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	var le *os.LinkError
	if errors.As(err, &le) {
		return le.Err
	}
	return err
}

// kind names the type of a file that is neither a folder nor a regular
// file.
func kind(m fs.FileMode) string {
	switch {
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeCharDevice != 0:
		return "a character device"
	case m&fs.ModeDevice != 0:
		return "a device"
	}
	return "a special file"
}

// bytesString formats n bytes in binary units: "12.3 GiB".
func bytesString(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d bytes", n)
	}
	x, i := float64(n), 0
	for x >= unit && i < 6 {
		x /= unit
		i++
	}
	return fmt.Sprintf("%.1f %ciB", x, "KMGTPE"[i-1])
}
