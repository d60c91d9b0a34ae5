package confine

import (
	"fmt"

	"golang.org/x/sys/unix"
)

// asm assembles a classic BPF program with named jump targets: a jump's target "" is the next
// instruction. Jumps only go forward, as BPF requires, at most 255 instructions.
type asm struct {
	ins    []unix.SockFilter
	jumps  []asmJump
	labels map[string]int
}

type asmJump struct {
	at     int
	jt, jf string
}

func (a *asm) label(name string) {
	if a.labels == nil {
		a.labels = map[string]int{}
	}
	if _, dup := a.labels[name]; dup {
		panic("bpf label " + name + " twice")
	}
	a.labels[name] = len(a.ins)
}

// ld loads the 32-bit word at off of seccomp_data into A.
func (a *asm) ld(off uint32) {
	a.ins = append(a.ins, unix.SockFilter{Code: unix.BPF_LD | unix.BPF_W | unix.BPF_ABS, K: off})
}

func (a *asm) and(k uint32) {
	a.ins = append(a.ins, unix.SockFilter{Code: unix.BPF_ALU | unix.BPF_AND | unix.BPF_K, K: k})
}

func (a *asm) ret(v uint32) {
	a.ins = append(a.ins, unix.SockFilter{Code: unix.BPF_RET | unix.BPF_K, K: v})
}

func (a *asm) jump(op uint16, k uint32, jt, jf string) {
	a.jumps = append(a.jumps, asmJump{len(a.ins), jt, jf})
	a.ins = append(a.ins, unix.SockFilter{Code: unix.BPF_JMP | op | unix.BPF_K, K: k})
}

func (a *asm) jeq(k uint32, jt, jf string)  { a.jump(unix.BPF_JEQ, k, jt, jf) }
func (a *asm) jge(k uint32, jt, jf string)  { a.jump(unix.BPF_JGE, k, jt, jf) }
func (a *asm) jset(k uint32, jt, jf string) { a.jump(unix.BPF_JSET, k, jt, jf) }

// jeqAny jumps to target when A is any of ks, and goes on otherwise.
func (a *asm) jeqAny(ks []uint32, target string) {
	for _, k := range ks {
		a.jeq(k, target, "")
	}
}

// socketType allows a socket call whose type argument, without its flags, is one of types,
// and refuses it with EACCES otherwise.
func (a *asm) socketType(types ...uint32) {
	a.ld(offArg1)
	a.and(0xf) // SOCK_TYPE_MASK: the kernel's own reading of the type
	a.jeqAny(types, "allow")
	a.ret(errno(unix.EACCES))
}

// assemble resolves the jumps.
func (a *asm) assemble() []unix.SockFilter {
	for _, j := range a.jumps {
		a.ins[j.at].Jt = a.offset(j.at, j.jt)
		a.ins[j.at].Jf = a.offset(j.at, j.jf)
	}
	return a.ins
}

func (a *asm) offset(at int, target string) uint8 {
	if target == "" {
		return 0
	}
	to, ok := a.labels[target]
	if !ok {
		panic("bpf label " + target + " missing")
	}
	d := to - at - 1
	if d < 0 || d > 255 {
		panic(fmt.Sprintf("bpf jump from %d to %s (%d) out of range", at, target, to))
	}
	return uint8(d)
}
