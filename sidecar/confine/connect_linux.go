package confine

import (
	"fmt"

	ll "github.com/landlock-lsm/go-landlock/landlock/syscall"
)

// connectHandled is the network access a policy with ConnectPorts restricts: TCP connect,
// from the ABI that has it.
func connectHandled(abi int, p Policy) uint64 {
	if len(p.ConnectPorts) == 0 || abi < MinConnectABI {
		return 0
	}
	return ll.AccessNetConnectTCP
}

// addPortRules allows TCP connect to each of p's ports, where the ruleset restricts connect
// and DenyNetwork does not forbid it all.
func addPortRules(ruleset int, attr ll.RulesetAttr, p Policy) error {
	if attr.HandledAccessNet&ll.AccessNetConnectTCP == 0 || p.DenyNetwork {
		return nil
	}
	for _, port := range p.ConnectPorts {
		if err := ll.LandlockAddNetPortRule(ruleset, &ll.NetPortAttr{AllowedAccess: ll.AccessNetConnectTCP, Port: uint64(port)}, 0); err != nil {
			return fmt.Errorf("landlock_add_rule connect to port %d: %w", port, err)
		}
	}
	return nil
}
