package runtime

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/agentcanvas/agentcanvas/sidecar/confine"
)

// guardianEnv marks a re-execution of this binary as a guardian (see guardian_linux.go).
const (
	guardianEnv   = "AGENTCANVAS_GUARDIAN"
	guardianMagic = "v3"
	// guardianGraceEnv, in an agent's environment, is how long leftovers of the finished
	// agent get between SIGTERM and SIGKILL.
	guardianGraceEnv = "AGENTCANVAS_GUARDIAN_GRACE_MS"
)

// guardianRequest is what the sidecar sends a guardian to start one agent turn, encoded as
// NUL-terminated fields "v3", path, dir, grace in ms, len(argv), argv…, len(env), env…,
// len(policy), policy….
type guardianRequest struct {
	path  string
	dir   string
	grace time.Duration
	argv  []string
	env   []string
	// policy is the turn's confinement (confine.Policy.Encode); empty: none.
	policy []string
	// owner is the agent (run and agent id) the turn is of, and its world's key when it has
	// one; not sent: it picks the guardian.
	owner string
	// world is the world a confined turn gets (nil: none); not sent: it starts the guardian.
	world *worldSpec
}

// defaultGuardianGrace is how long leftovers of a finished agent get between SIGTERM and
// SIGKILL unless the agent's environment says otherwise (guardianGraceEnv).
const defaultGuardianGrace = 2 * time.Second

// newGuardianRequest takes the grace period out of the agent's environment, with the
// guardian's own variables, so that neither reaches the agent.
func newGuardianRequest(path string, argv []string, dir string, env []string) guardianRequest {
	r := guardianRequest{path: path, dir: dir, grace: defaultGuardianGrace, argv: argv,
		owner: confine.Lookup(env, "AGENTCANVAS_RUN_ID") + "\x00" + confine.Lookup(env, "AGENTCANVAS_AGENT_ID")}
	r.env = make([]string, 0, len(env))
	for _, kv := range env {
		switch {
		case strings.HasPrefix(kv, guardianEnv+"="):
		case strings.HasPrefix(kv, guardianGraceEnv+"="):
			if ms, err := strconv.ParseInt(kv[len(guardianGraceEnv)+1:], 10, 32); err == nil && ms >= 0 {
				r.grace = time.Duration(ms) * time.Millisecond
			}
		default:
			r.env = append(r.env, kv)
		}
	}
	return r
}

var errNUL = errors.New("an argument or environment variable contains a NUL byte")

func (r guardianRequest) encode() ([]byte, error) {
	var b bytes.Buffer
	put := func(s string) error {
		if strings.IndexByte(s, 0) >= 0 {
			return errNUL
		}
		b.WriteString(s)
		b.WriteByte(0)
		return nil
	}
	fields := []string{guardianMagic, r.path, r.dir, strconv.FormatInt(r.grace.Milliseconds(), 10), strconv.Itoa(len(r.argv))}
	fields = append(fields, r.argv...)
	fields = append(fields, strconv.Itoa(len(r.env)))
	fields = append(fields, r.env...)
	fields = append(fields, strconv.Itoa(len(r.policy)))
	fields = append(fields, r.policy...)
	for _, f := range fields {
		if err := put(f); err != nil {
			return nil, err
		}
	}
	return b.Bytes(), nil
}

// maxGuardianList bounds argv and env counts read by a guardian, maxGuardianRequest a whole
// request (a garbled request must not make it allocate without end).
const (
	maxGuardianList    = 1 << 20
	maxGuardianRequest = 64 << 20
)

// decodeGuardianRequest is encode's inverse.
func decodeGuardianRequest(b []byte) (guardianRequest, error) {
	br := bufio.NewReader(bytes.NewReader(b))
	var r guardianRequest
	field := func() (string, error) {
		s, err := br.ReadString(0)
		if err != nil {
			return "", errors.New("guardian request cut short")
		}
		return s[:len(s)-1], nil
	}
	count := func() (int, error) {
		s, err := field()
		if err != nil {
			return 0, err
		}
		n, err := strconv.Atoi(s)
		if err != nil || n < 0 || n > maxGuardianList || strconv.Itoa(n) != s {
			return 0, fmt.Errorf("guardian request: bad count %q", s)
		}
		return n, nil
	}
	list := func() ([]string, error) {
		n, err := count()
		if err != nil {
			return nil, err
		}
		out := make([]string, 0, min(n, 1024))
		for range n {
			s, err := field()
			if err != nil {
				return nil, err
			}
			out = append(out, s)
		}
		return out, nil
	}
	magic, err := field()
	if err != nil {
		return r, err
	}
	if magic != guardianMagic {
		return r, fmt.Errorf("guardian request: version %q, want %q", magic, guardianMagic)
	}
	if r.path, err = field(); err != nil {
		return r, err
	}
	if r.dir, err = field(); err != nil {
		return r, err
	}
	graceMS, err := field()
	if err != nil {
		return r, err
	}
	ms, err := strconv.ParseInt(graceMS, 10, 32)
	if err != nil || ms < 0 || strconv.FormatInt(ms, 10) != graceMS {
		return r, fmt.Errorf("guardian request: bad grace %q", graceMS)
	}
	r.grace = time.Duration(ms) * time.Millisecond
	if r.argv, err = list(); err != nil {
		return r, err
	}
	if len(r.argv) == 0 {
		return r, errors.New("guardian request: no command")
	}
	if r.env, err = list(); err != nil {
		return r, err
	}
	if r.policy, err = list(); err != nil {
		return r, err
	}
	if len(r.policy) == 0 {
		r.policy = nil
	}
	if _, err := br.ReadByte(); err != io.EOF {
		return r, errors.New("guardian request: trailing bytes")
	}
	return r, nil
}
