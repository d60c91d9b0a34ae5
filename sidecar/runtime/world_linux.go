package runtime

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"

	"github.com/agentcanvas/agentcanvas/sidecar/confine"
)

// Worlds (confine.BuildWorld): where the kernel lets this user make namespaces, a confined
// agent's guardian starts in user, mount and IPC namespaces of its own (and a network one
// for network none) and makes the world of the agent's rules there before its first turn.
// Every turn it starts sees that world; a turn with other rules (another program, a check
// run as the agent) gets a guardian, and a world, of its own. Where the namespaces are
// refused the guardian is an ordinary one and the agent runs on Landlock and the filter
// alone, and its turns say so once (noWorld).

// noWorldEnv, set to 1, makes agents run without worlds: how tests show what a kernel that
// refuses namespaces leaves (the rest still holds) on one that allows them.
const noWorldEnv = "AGENTCANVAS_TEST_NO_WORLD"

// guardianWorldEnv tells a guardian to make the world of its first confined request.
const guardianWorldEnv = "AGENTCANVAS_GUARDIAN_WORLD"

// worldMountsRefusedEnv, set to 1, makes a guardian fail to make its world, as under a
// policy that lets a user make namespaces but not mount in them (Ubuntu's AppArmor
// restriction): how tests show that the agent then runs on its rules alone.
const worldMountsRefusedEnv = "AGENTCANVAS_TEST_WORLD_MOUNTS_REFUSED"

// worldSpec is what a guardian's namespaces need: the world is keyed by its rules.
type worldSpec struct {
	key    string
	newNet bool // network none: a network namespace with nothing in it
}

// worlds says whether agents get worlds here; a failure turns them off for the sidecar's
// life, with the reason (the first agent's warning says it).
var worlds struct {
	sync.Mutex
	off    string
	warned bool
}

func worldsOff() string {
	if os.Getenv(noWorldEnv) == "1" {
		return "turned off for a test (" + noWorldEnv + "=1)"
	}
	worldProbe.Do(probeWorlds)
	worlds.Lock()
	defer worlds.Unlock()
	return worlds.off
}

var worldProbe sync.Once

// probeWorlds asks the kernel once for the namespaces of a world, with a program that does
// nothing (true), so that the run's start can say whether agents get worlds. A kernel that
// makes them but refuses the mounts (an AppArmor policy) is found by the first guardian.
func probeWorlds() {
	for _, p := range []string{"/usr/bin/true", "/bin/true"} {
		if _, err := os.Stat(p); err != nil {
			continue
		}
		cmd := exec.Command(p)
		cmd.SysProcAttr = worldAttrFor(&worldSpec{})
		if err := cmd.Run(); err != nil {
			worldFailed(fmt.Errorf("the kernel refused the namespaces: %w", err))
		}
		return
	}
}

// worldFailed turns worlds off after err.
func worldFailed(err error) {
	worlds.Lock()
	if worlds.off == "" {
		worlds.off = err.Error()
	}
	worlds.Unlock()
}

// WorldStatus says whether a confined agent gets a world of its own here (run_started).
func WorldStatus() string {
	if off := worldsOff(); off != "" {
		return "no world of its own: " + off
	}
	return "a world of its own (user and mount namespaces)"
}

// worldFor is the world a confined turn with policy p gets; nil when worlds are off.
func worldFor(p confine.Policy) *worldSpec {
	if worldsOff() != "" {
		return nil
	}
	h := sha256.New()
	for _, f := range p.Encode() {
		h.Write([]byte(f + "\x00"))
	}
	return &worldSpec{key: hex.EncodeToString(h.Sum(nil)[:12]), newNet: p.DenyNetwork && len(p.ConnectPorts) == 0}
}

// worldAttrFor is worldAttr; tests swap it for namespaces the kernel refuses.
var worldAttrFor = worldAttr

// worldAttr is how a world guardian starts: its namespaces, this user (root: every id) as
// itself in them, and for an ordinary user CAP_SYS_ADMIN in its own user namespace, to mount.
func worldAttr(w *worldSpec) *syscall.SysProcAttr {
	flags := uintptr(syscall.CLONE_NEWUSER | syscall.CLONE_NEWNS | syscall.CLONE_NEWIPC)
	if w.newNet {
		flags |= syscall.CLONE_NEWNET
	}
	attr := &syscall.SysProcAttr{Setsid: true, Cloneflags: flags}
	uid, gid := os.Getuid(), os.Getgid()
	if uid == 0 {
		all := []syscall.SysProcIDMap{{ContainerID: 0, HostID: 0, Size: 1<<32 - 1}}
		attr.UidMappings, attr.GidMappings, attr.GidMappingsEnableSetgroups = all, all, true
	} else {
		attr.UidMappings = []syscall.SysProcIDMap{{ContainerID: uid, HostID: uid, Size: 1}}
		attr.GidMappings = []syscall.SysProcIDMap{{ContainerID: gid, HostID: gid, Size: 1}}
		attr.AmbientCaps = []uintptr{capSysAdmin}
	}
	return attr
}

const capSysAdmin = 21 // CAP_SYS_ADMIN, linux/capability.h

// errWorldRefused is a guardian's report that it could not make its world.
var errWorldRefused = errors.New("world")

// worldError reads a guardian's "error world: …" reply.
func worldError(msg string) error {
	if why, ok := strings.CutPrefix(msg, "world: "); ok {
		return fmt.Errorf("%w: %s", errWorldRefused, why)
	}
	return nil
}

// --- the guardian's side -------------------------------------------------------------------

// guardianWorld is the guardian's world: wanted when it was started in namespaces, built at
// its first confined turn, or failed with the reason.
var guardianWorld struct {
	wanted, built bool
	failed        string
}

// enterWorld makes the guardian's world from the first confined request's policy, once. It
// returns the turn's policy as the world needs it (its private folders added), and why there
// is no world when one was wanted. A world broken half-way ends the guardian: its view of the
// system is gone.
func enterWorld(pol confine.Policy, req guardianRequest, reply func(string, ...any)) (confine.Policy, string) {
	w := &guardianWorld
	if !w.wanted {
		return pol, ""
	}
	if !w.built && w.failed == "" {
		build := confine.BuildWorld
		if os.Getenv(worldMountsRefusedEnv) == "1" {
			build = func(confine.Policy, ...string) error { return errors.New("mounts refused for a test") }
		}
		if err := build(pol, req.dir); err != nil {
			if errors.Is(err, confine.ErrWorldBroken) {
				reply("error world: %v", err)
				os.Exit(2)
			}
			w.failed = err.Error()
		} else {
			w.built = true
		}
	}
	if !w.built {
		return pol, w.failed
	}
	pol.Rules = append(pol.Rules, confine.WorldRules...)
	pol.World = true
	return pol, ""
}
