//go:build !linux

package runtime

// Without Linux's child subreaper and parent-death signal there is no guardian: agents are
// started directly in their own process group, which is killed when the agent exits. If the
// sidecar itself is killed, grandchildren that left the group can survive.
const guardianSupported = false
