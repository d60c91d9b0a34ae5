package confine

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"golang.org/x/sys/unix"
)

// A world is what an agent sees of the filesystem where the kernel lets an unprivileged
// process make namespaces: a mount namespace of its own (and user and IPC namespaces, made by
// whoever starts the process that calls BuildWorld), whose root is an empty tmpfs holding
// only what the agent's rules name, each bound at its own path (read-only for a Read rule),
// and:
//
//   - a minimal /dev: the allowed devices bound one by one, a private devpts (the agent's own
//     pseudo-terminals; /dev/ptmx leads there), /dev/fd and the std links, a private /dev/shm
//     and /dev/mqueue;
//   - a private /tmp;
//   - the links on the way to the paths the rules name (/bin -> usr/bin), so the names the
//     agent was given still lead where they did.
//
// It is bubblewrap's construction, done by the guardian itself. Landlock and the filter stay
// the second wall: the same rules are applied inside the world, and a socket file or a
// process the agent cannot see it cannot reach through a name. What a world does not change:
// /proc and /sys are the system's (other processes' entries stay closed by Landlock), and the
// network is the system's unless the policy denies it (the starter then adds a network
// namespace with nothing in it).

// worldBase is where the world is staged: a tmpfs over it, in the new mount namespace only.
const worldBase = "/tmp"

// WorldRules are what a world adds to an agent's rules: its private /tmp, /dev/shm and
// /dev/mqueue, and its own pseudo-terminals.
var WorldRules = []Rule{{Write, "/tmp"}, {Write, "/dev/shm"}, {Write, "/dev/mqueue"}, {Device, "/dev/pts"}}

// BuildWorld makes the calling process's mount namespace (its own, with CAP_SYS_ADMIN in the
// user namespace that owns it) the world of policy p, and makes dirs (the agent's working
// folder) exist in it. On an error before the switch, the namespace is left as it
// was; after it, the process must not start an agent (ErrWorldBroken).
func BuildWorld(p Policy, dirs ...string) error {
	if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
		return fmt.Errorf("making mounts private: %w", err)
	}
	if err := unix.Mount("tmpfs", worldBase, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, "mode=0755"); err != nil {
		return fmt.Errorf("staging tmpfs on %s: %w", worldBase, err)
	}
	if err := stage(p, dirs); err != nil {
		_ = unix.Unmount(worldBase, unix.MNT_DETACH)
		return err
	}
	return nil
}

// ErrWorldBroken wraps an error after the switch of roots: the process's view is gone.
var ErrWorldBroken = errors.New("the world could not be finished")

// stage builds the world in the staging tmpfs and switches to it.
func stage(p Policy, dirs []string) error {
	if err := os.Chdir(worldBase); err != nil {
		return err
	}
	for _, d := range []string{"old", "new"} {
		if err := os.Mkdir(d, 0o755); err != nil {
			return err
		}
	}
	if err := unix.Mount("tmpfs", "new", "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, "mode=0755"); err != nil {
		return fmt.Errorf("world root: %w", err)
	}
	// The staging tmpfs becomes /, the system's root /old: its /tmp shows again there.
	if err := unix.PivotRoot(".", "old"); err != nil {
		return fmt.Errorf("pivot_root: %w", err)
	}
	w := mountWorld{host: "/old", root: "/new", listings: new([]string)}
	err := w.fill(p, dirs)
	if err == nil {
		err = w.enter()
	}
	if err != nil {
		return fmt.Errorf("%w: %w", ErrWorldBroken, err)
	}
	return nil
}

// mountWorld is a world being built: the system's root at host, the world's at root.
// listings are the folders a List rule names, each a tmpfs of its own that holds only the
// mount points of the entries other rules grant: made read-only once those are bound.
type mountWorld struct {
	host, root string
	listings   *[]string
}

// fill binds the rules, makes the private folders and the links, and the dirs.
func (w mountWorld) fill(p Policy, dirs []string) error {
	rules := slices.Clone(p.Rules)
	slices.SortFunc(rules, func(a, b Rule) int { return strings.Compare(a.Path, b.Path) })
	under := func(dir string) func(Rule) bool {
		return func(r Rule) bool { return r.Path == dir || strings.HasPrefix(r.Path, dir+"/") }
	}
	for _, r := range rules {
		if under("/dev")(r) || under("/tmp")(r) {
			continue // on the world's own /dev and /tmp, below
		}
		if err := w.bind(r); err != nil {
			return err
		}
	}
	if err := w.dev(p.Rules); err != nil {
		return err
	}
	if err := w.tmp(slices.DeleteFunc(slices.Clone(rules), func(r Rule) bool { return !under("/tmp")(r) || r.Path == "/tmp" })); err != nil {
		return err
	}
	for _, n := range p.Names {
		if err := w.mirror(n, 0); err != nil {
			return fmt.Errorf("the path %s: %w", n, err)
		}
	}
	for _, d := range dirs {
		if filepath.IsAbs(d) {
			_ = os.MkdirAll(w.root+d, 0o755) // a mount point, or inside a bound folder (there)
		}
	}
	// The listings hold the mount points and links made above, and nothing more, ever.
	for _, l := range *w.listings {
		if err := unix.Mount("", w.root+l, "", unix.MS_REMOUNT|unix.MS_RDONLY|unix.MS_NOSUID|unix.MS_NODEV, ""); err != nil {
			return fmt.Errorf("read-only %s: %w", l, err)
		}
	}
	return nil
}

// bind binds the system's r.Path at the same path in the world, read-only unless r allows
// writing. A path that is gone is left out (the rule allows nothing either). A folder a List
// rule names is not bound: it is a listing (below).
func (w mountWorld) bind(r Rule) error {
	src, dst := w.host+r.Path, w.root+r.Path
	st, err := os.Lstat(src)
	if err != nil || st.Mode()&os.ModeSymlink != 0 {
		return nil // gone, or a link made since the rules were built: Landlock refuses it too
	}
	if r.Access == List && st.IsDir() {
		return w.listing(r.Path)
	}
	if err := makeMountPoint(dst, st.IsDir()); err != nil {
		return fmt.Errorf("mount point %s: %w", r.Path, err)
	}
	if err := unix.Mount(src, dst, "", unix.MS_BIND|unix.MS_REC, ""); err != nil {
		return fmt.Errorf("binding %s: %w", r.Path, err)
	}
	if r.Access == Write || r.Access == Device {
		return nil
	}
	return remountReadOnly(dst)
}

// listing makes the folder p of a List rule an empty tmpfs in the world, in which the rules
// for its entries (sorted after it) make their mount points. Binding the folder itself would
// show every entry in it, guarded by Landlock alone, and beneath the world's private /tmp
// (whose write grant covers whatever is bound below it: a workspace in /tmp) not even by that:
// another agent's sandbox or a hidden skill would be readable. Names of entries no rule grants
// are not shown either.
func (w mountWorld) listing(p string) error {
	if err := w.mountTmpfs(p, "mode=0755"); err != nil {
		return err
	}
	*w.listings = append(*w.listings, p)
	return nil
}

// makeMountPoint makes dst (a folder, or an empty file to bind a file on) and its parents.
func makeMountPoint(dst string, dir bool) error {
	if _, err := os.Lstat(dst); err == nil {
		return nil
	}
	if dir {
		return os.MkdirAll(dst, 0o755)
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	f, err := os.OpenFile(dst, os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	return f.Close()
}

// remountReadOnly makes the bind at dst read-only, with every mount beneath it (/sys's cgroup
// hierarchies, a tmpfs inside a bound workspace): mount_setattr (Linux 5.12) recursively; else
// the bind alone, keeping the flags the kernel locks on a mount from a more privileged
// namespace (nosuid, nodev, noexec, the atime ones).
func remountReadOnly(dst string) error {
	if unix.MountSetattr(unix.AT_FDCWD, dst, unix.AT_RECURSIVE, &unix.MountAttr{Attr_set: unix.MOUNT_ATTR_RDONLY}) == nil {
		return nil
	}
	var st unix.Statfs_t
	if err := unix.Statfs(dst, &st); err != nil {
		return err
	}
	flags := uintptr(unix.MS_REMOUNT | unix.MS_BIND | unix.MS_RDONLY)
	for _, f := range [][2]uintptr{{unix.ST_NOSUID, unix.MS_NOSUID}, {unix.ST_NODEV, unix.MS_NODEV}, {unix.ST_NOEXEC, unix.MS_NOEXEC},
		{unix.ST_NOATIME, unix.MS_NOATIME}, {unix.ST_NODIRATIME, unix.MS_NODIRATIME}, {unix.ST_RELATIME, unix.MS_RELATIME}} {
		if uintptr(st.Flags)&f[0] != 0 {
			flags |= f[1]
		}
	}
	if err := unix.Mount("", dst, "", flags, ""); err != nil {
		return fmt.Errorf("read-only %s: %w", dst, err)
	}
	return nil
}

// The world's private /tmp and /dev/shm are memory (tmpfs) charged to none of the agent's
// processes: the OOM killer could end every process on the machine without freeing it (it
// goes with the world's last process). Unbounded, each could take half the memory. Programs
// that honour TMPDIR write on disk (the agent's TMPDIR is bound from the system's temporary
// folder); these hold what is written to /tmp and /dev/shm by name. Four times Docker's
// /dev/shm leaves room for a browser under test.
const (
	worldTmpSize = "size=512m,nr_inodes=65536"
	worldShmSize = "size=256m,nr_inodes=16384"
)

// tmp makes the world's private /tmp, writable, and binds the rules under it (the agent's
// TMPDIR, a workspace in /tmp). The folders on the way to a deeper one (/tmp/x for
// /tmp/x/ws/.agentcanvas/sandboxes/…/work) are a read-only tmpfs of their own: the private
// /tmp is writable, and a path that looks like the workspace must not be.
func (w mountWorld) tmp(rules []Rule) error {
	if err := w.mountTmpfs("/tmp", "mode=1777,"+worldTmpSize); err != nil {
		return err
	}
	top := func(p string) string { return "/tmp/" + strings.SplitN(strings.TrimPrefix(p, "/tmp/"), "/", 2)[0] }
	bound := map[string]bool{}
	for _, r := range rules {
		bound[r.Path] = true
	}
	var skeletons []string
	for _, r := range rules {
		if t := top(r.Path); !bound[t] && !slices.Contains(skeletons, t) {
			if err := w.mountTmpfs(t, "mode=0755"); err != nil {
				return err
			}
			skeletons = append(skeletons, t)
		}
		if err := w.bind(r); err != nil {
			return err
		}
	}
	for _, t := range skeletons {
		if err := unix.Mount("", w.root+t, "", unix.MS_REMOUNT|unix.MS_RDONLY|unix.MS_NOSUID|unix.MS_NODEV, ""); err != nil {
			return fmt.Errorf("read-only %s: %w", t, err)
		}
	}
	return nil
}

func (w mountWorld) mountTmpfs(path, opts string) error {
	if err := os.MkdirAll(w.root+path, 0o755); err != nil {
		return err
	}
	if err := unix.Mount("tmpfs", w.root+path, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, opts); err != nil {
		return fmt.Errorf("private %s: %w", path, err)
	}
	return nil
}

// dev makes the world's /dev: the devices the rules allow, bound one by one, a private
// devpts, /dev/shm and /dev/mqueue, and the usual links.
func (w mountWorld) dev(rules []Rule) error {
	if err := w.mountTmpfs("/dev", "mode=0755"); err != nil {
		return err
	}
	for _, r := range rules {
		if r.Access != Device || !strings.HasPrefix(r.Path, "/dev/") || strings.HasPrefix(r.Path, "/dev/pts") {
			continue
		}
		if err := w.bind(r); err != nil {
			return err
		}
	}
	if err := os.Mkdir(w.root+"/dev/pts", 0o755); err != nil {
		return err
	}
	if err := unix.Mount("devpts", w.root+"/dev/pts", "devpts", unix.MS_NOSUID|unix.MS_NOEXEC, "newinstance,ptmxmode=0666,mode=0620"); err != nil {
		return fmt.Errorf("private devpts: %w", err)
	}
	if err := w.mountTmpfs("/dev/shm", "mode=1777,"+worldShmSize); err != nil {
		return err
	}
	if err := os.Mkdir(w.root+"/dev/mqueue", 0o755); err != nil {
		return err
	}
	if err := unix.Mount("mqueue", w.root+"/dev/mqueue", "mqueue", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, ""); err != nil {
		return fmt.Errorf("private mqueue: %w", err)
	}
	for name, target := range map[string]string{"ptmx": "pts/ptmx", "fd": "/proc/self/fd", "stdin": "/proc/self/fd/0",
		"stdout": "/proc/self/fd/1", "stderr": "/proc/self/fd/2"} {
		if err := os.Symlink(target, w.root+"/dev/"+name); err != nil {
			return err
		}
	}
	return nil
}

// maxLinks bounds the links mirror follows for one path, as the kernel does (40).
const maxLinks = 40

// mirror makes the name p lead in the world where it leads on the system: each link on its
// way is made again, where the world has nothing at that path yet.
func (w mountWorld) mirror(p string, links int) error {
	cur := "/"
	rest := strings.Split(strings.Trim(filepath.Clean(p), "/"), "/")
	for i, comp := range rest {
		if comp == "" {
			continue
		}
		next := filepath.Join(cur, comp)
		st, err := os.Lstat(w.host + next)
		if err != nil {
			return nil // gone: nothing to lead to
		}
		if st.Mode()&os.ModeSymlink == 0 {
			cur = next
			continue
		}
		if links++; links > maxLinks {
			return unix.ELOOP
		}
		target, err := os.Readlink(w.host + next)
		if err != nil {
			return err
		}
		if _, err := os.Lstat(w.root + next); err != nil {
			if err := os.MkdirAll(filepath.Dir(w.root+next), 0o755); err != nil {
				return err
			}
			if err := os.Symlink(target, w.root+next); err != nil {
				return err
			}
		}
		if !filepath.IsAbs(target) {
			target = filepath.Join(cur, target)
		}
		return w.mirror(filepath.Join(append([]string{target}, rest[i+1:]...)...), links)
	}
	return nil
}

// enter drops the system's root, makes the world's root read-only and switches to it.
func (w mountWorld) enter() error {
	if err := unix.Unmount(w.host, unix.MNT_DETACH); err != nil {
		return fmt.Errorf("dropping the system's root: %w", err)
	}
	if err := unix.Mount("", w.root+"/dev", "", unix.MS_REMOUNT|unix.MS_RDONLY|unix.MS_NOSUID, ""); err != nil {
		return fmt.Errorf("read-only /dev: %w", err)
	}
	if err := unix.Mount("", w.root, "", unix.MS_REMOUNT|unix.MS_RDONLY|unix.MS_NOSUID|unix.MS_NODEV, ""); err != nil {
		return fmt.Errorf("read-only root: %w", err)
	}
	if err := os.Chdir(w.root); err != nil {
		return err
	}
	if err := unix.PivotRoot(".", "."); err != nil {
		return fmt.Errorf("pivot_root into the world: %w", err)
	}
	if err := unix.Unmount(".", unix.MNT_DETACH); err != nil {
		return fmt.Errorf("dropping the staging root: %w", err)
	}
	return os.Chdir("/")
}
