//go:build unix && !linux

package runtime

// resumeCheckable: there is no /proc to read here, so a resume is not checked again.
const resumeCheckable = false

func groupLeftStopped(int) bool { return false }
