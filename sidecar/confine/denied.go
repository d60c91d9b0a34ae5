package confine

import (
	"regexp"
	"strings"
)

// A refused access is an ordinary error for the agent: EACCES, which each tool words its own
// way. These are the ways seen in practice:
//
//	bash: /w/x: Permission denied                      (shells, coreutils: PATH: Permission denied)
//	touch: cannot touch '/etc/x': Permission denied     (quoted)
//	EACCES: permission denied, open '/etc/x'            (Node)
//	PermissionError: [Errno 13] Permission denied: '/etc/x'   (Python)
//	open /etc/x: permission denied                      (Go)
//	… Operation not permitted                           (EPERM: links, renames across folders)
//	… Read-only file system                             (EROFS: a read-only folder of a world)
var (
	deniedRE = regexp.MustCompile(`(?i)permission denied|\bEACCES\b|operation not permitted|\bEPERM\b|read-only file system|\bEROFS\b`)
	quotedRE = regexp.MustCompile("['\"‘`]((?:/|~/|\\./|\\.\\./)[^'\"’`\\\\]*)\\\\?['\"’`]")
	pathRE   = regexp.MustCompile(`(?:^|[\s:(\[])((?:/|~/|\./|\.\./)[^\s:'"()\[\],]*)`)
)

// DeniedPath reads one line an agent printed: ok when it reports a refused access, with the
// path it names ("" when it names none).
func DeniedPath(line string) (path string, ok bool) {
	if len(line) > 4096 {
		line = line[:4096]
	}
	loc := deniedRE.FindStringIndex(line)
	if loc == nil {
		return "", false
	}
	if m := quotedRE.FindStringSubmatch(line); m != nil {
		return m[1], true
	}
	// Unquoted: the path nearest before the words (bash, coreutils, Go), else the first after.
	before := pathRE.FindAllStringSubmatch(line[:loc[0]], -1)
	if len(before) > 0 {
		return strings.TrimRight(before[len(before)-1][1], "."), true
	}
	if m := pathRE.FindStringSubmatch(line[loc[1]:]); m != nil {
		return strings.TrimRight(m[1], "."), true
	}
	return "", true
}
