package confine

import (
	"fmt"
	"path/filepath"
	"strings"
)

// Access is what a rule allows beneath its path.
type Access byte

const (
	// Read: read files, list folders, execute programs.
	Read Access = 'r'
	// List: list the folder's entries (names only) and its subfolders' names, nothing else.
	List Access = 'l'
	// Write: Read, and create, write, truncate, rename within, and remove anything beneath.
	Write Access = 'w'
	// Device: read, write and ioctl on device files (/dev/null, the agent's pseudo-terminals).
	Device Access = 'd'
	// Socket: a socket file runtime.unixSockets grants, made visible in a world; no file
	// right (connect() needs none before Landlock ABI 9).
	Socket Access = 's'
)

func (a Access) String() string {
	switch a {
	case Read:
		return "read"
	case List:
		return "list"
	case Write:
		return "write"
	case Device:
		return "device"
	case Socket:
		return "socket"
	}
	return fmt.Sprintf("access(%q)", byte(a))
}

// Rule allows Access to the file or folder at Path and everything beneath it.
type Rule struct {
	Access Access
	Path   string // absolute and clean
}

// Policy is what one agent process (and everything it starts) may do. Landlock only allows:
// what no rule names is refused, whatever the file permissions say.
type Policy struct {
	Rules []Rule
	// DenyNetwork refuses TCP connect and bind (runtime.network: none; Landlock ABI 4 and up).
	DenyNetwork bool
	// AllowUnixSockets leaves the agent Unix sockets (runtime.unixSockets grants a path);
	// without it the thread's seccomp filter refuses socket(AF_UNIX) (unixsock_linux.go).
	AllowUnixSockets bool
	// ConnectPorts, when set, are the only TCP ports the agent may connect to (the model
	// gateway's: connect.go); without DenyNetwork, binding stays allowed.
	ConnectPorts []uint16
	// Required: an agent whose policy the kernel cannot enforce is not started (ModeRequired);
	// otherwise it runs unconfined and the runtime says so.
	Required bool
	// Names are the paths the rules were made from where links lead elsewhere (/bin for
	// /usr/bin, a PATH folder that is a link): a world makes them lead there again.
	Names []string
	// World says the agent runs in a world of its own (world_linux.go): its own mount and IPC
	// namespaces, where what it sees is what its rules name. Set where the world was made, not
	// encoded.
	World bool
	// ProcessFilter, when set, is the filter already installed on every thread of the process
	// that forks the agent (InstallProcessFilter): RestrictThread then installs none of its
	// own when it is the one the policy needs. Not encoded.
	ProcessFilter *FilterOptions
}

// Encoding of a Policy as a list of strings (the guardian request carries it): one
// "<access letter><path>" per rule, and the flags "+network=none", "+unix-sockets" and
// "+required".
const (
	flagDenyNetwork = "+network=none"
	flagUnixSockets = "+unix-sockets"
	flagRequired    = "+required"
	flagName        = "+name="
)

// Encode is the policy as strings for the guardian request; Decode reads them back.
func (p Policy) Encode() []string {
	out := make([]string, 0, len(p.Rules)+3)
	if p.DenyNetwork {
		out = append(out, flagDenyNetwork)
	}
	if p.AllowUnixSockets {
		out = append(out, flagUnixSockets)
	}
	if p.Required {
		out = append(out, flagRequired)
	}
	out = append(out, encodePorts(p.ConnectPorts)...)
	for _, r := range p.Rules {
		out = append(out, string(r.Access)+r.Path)
	}
	for _, n := range p.Names {
		out = append(out, flagName+n)
	}
	return out
}

// Decode is Encode's inverse; it refuses anything Encode does not write.
func Decode(fields []string) (Policy, error) {
	var p Policy
	for _, f := range fields {
		switch {
		case f == flagDenyNetwork:
			p.DenyNetwork = true
		case f == flagUnixSockets:
			p.AllowUnixSockets = true
		case f == flagRequired:
			p.Required = true
		case strings.HasPrefix(f, flagName) && filepath.IsAbs(f[len(flagName):]):
			p.Names = append(p.Names, filepath.Clean(f[len(flagName):]))
		case strings.HasPrefix(f, flagConnect):
			port, err := decodePort(f)
			if err != nil {
				return Policy{}, err
			}
			p.ConnectPorts = append(p.ConnectPorts, port)
		case len(f) > 1 && strings.IndexByte("rlwds", f[0]) >= 0 && filepath.IsAbs(f[1:]) && filepath.Clean(f[1:]) == f[1:]:
			p.Rules = append(p.Rules, Rule{Access: Access(f[0]), Path: f[1:]})
		default:
			return Policy{}, fmt.Errorf("confinement rule %q: want an access letter (r, l, w, d, s) and an absolute clean path", f)
		}
	}
	return p, nil
}

// String lists the rules, for tests and logs.
func (p Policy) String() string {
	var b strings.Builder
	for _, r := range p.Rules {
		fmt.Fprintf(&b, "%s %s\n", r.Access, r.Path)
	}
	if p.DenyNetwork {
		b.WriteString("network none\n")
	}
	if p.AllowUnixSockets {
		b.WriteString("unix sockets\n")
	}
	return b.String()
}

// FilterOptions are what a policy's filter allows beyond its lists (filter_linux.go).
type FilterOptions struct {
	// UnixSockets allows socket(AF_UNIX) and datagram pairs: a runtime.unixSockets grant, or
	// a world of the agent's own where the sockets it sees are its own.
	UnixSockets bool
	// PrivateIPC allows System V IPC and message queues: the agent has an IPC namespace of
	// its own.
	PrivateIPC bool
	// TCPOnly allows IPv4 and IPv6 sockets for TCP only: Landlock's TCP rules decide where the
	// agent may connect (runtime.network none, or only the model gateway's port), and they see
	// no other protocol.
	TCPOnly bool
}

// FilterOptions is what the policy's filter allows beyond its list: Unix sockets with a
// grant, or in a world of the agent's own where the kernel scopes abstract sockets (Landlock
// ABI 6: abstract sockets belong to the network namespace, which the world shares); System V
// IPC and message queues in a world, whose IPC namespace is its own; TCP only where the
// Landlock rules restrict TCP (network none, or the gateway's port only).
func (p Policy) FilterOptions(abi int) FilterOptions {
	return FilterOptions{
		UnixSockets: p.AllowUnixSockets || p.World && abi >= MinScopeABI,
		PrivateIPC:  p.World,
		TCPOnly:     p.DenyNetwork || len(p.ConnectPorts) > 0,
	}
}
