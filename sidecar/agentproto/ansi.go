package agentproto

import "bytes"

const esc = 0x1b

// StripANSI removes terminal escape sequences (CSI such as colours and cursor
// moves, OSC such as titles and hyperlinks, DCS/APC/PM strings, and the short
// ESC sequences such as charset selection) from one line. It returns line
// itself when there is nothing to strip, so the common case costs one IndexByte.
func StripANSI(line []byte) []byte {
	if bytes.IndexByte(line, esc) < 0 {
		return line
	}
	return stripInto(make([]byte, 0, len(line)), line)
}

// stripInto appends line without its escape sequences to out.
func stripInto(out, line []byte) []byte {
	i := bytes.IndexByte(line, esc)
	for i >= 0 {
		out = append(out, line[:i]...)
		line = line[i+escLen(line[i:]):]
		i = bytes.IndexByte(line, esc)
	}
	return append(out, line...)
}

// escLen is the length of the escape sequence at the start of s (s[0] == ESC).
// An unfinished sequence runs to the end of s.
func escLen(s []byte) int {
	if len(s) < 2 {
		return len(s)
	}
	switch s[1] {
	case '[': // CSI: parameters and intermediates, then one final byte 0x40–0x7E
		for j := 2; j < len(s); j++ {
			if s[j] >= 0x40 && s[j] <= 0x7e {
				return j + 1
			}
		}
		return len(s)
	case ']', 'P', '_', '^': // OSC, DCS, APC, PM: up to BEL or ESC \
		for j := 2; j < len(s); j++ {
			if s[j] == 0x07 {
				return j + 1
			}
			if s[j] == esc && j+1 < len(s) && s[j+1] == '\\' {
				return j + 2
			}
		}
		return len(s)
	}
	// Other escapes: intermediate bytes 0x20–0x2F, then one final byte
	// ("ESC ( B" selects a character set, "ESC =" a keypad mode).
	j := 1
	for j < len(s) && s[j] >= 0x20 && s[j] <= 0x2f {
		j++
	}
	if j < len(s) {
		j++
	}
	return j
}
