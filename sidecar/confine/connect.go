package confine

import (
	"fmt"
	"strconv"
	"strings"
)

// An agent whose model calls go through the sidecar's model gateway may connect over TCP to
// the gateway's port only (Policy.ConnectPorts), unless its runtime.network widens that:
// where the key is the gateway's, a hostile agent has nothing to send it to. Landlock
// restricts ports, not addresses: the port is allowed on every host, and an agent can still
// bind, use UDP (before ABI 10) and the Unix sockets the policy leaves open.

// MinConnectABI is the first Landlock ABI that restricts TCP connect.
const MinConnectABI = 4

const flagConnect = "+connect="

func encodePorts(ports []uint16) []string {
	out := make([]string, 0, len(ports))
	for _, p := range ports {
		out = append(out, flagConnect+strconv.Itoa(int(p)))
	}
	return out
}

func decodePort(f string) (uint16, error) {
	n, err := strconv.Atoi(strings.TrimPrefix(f, flagConnect))
	if err != nil || n < 1 || n > 65535 {
		return 0, fmt.Errorf("confinement rule %q: want a TCP port 1-65535", f)
	}
	return uint16(n), nil
}
