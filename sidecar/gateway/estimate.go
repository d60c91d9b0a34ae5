package gateway

import (
	"bytes"
	"slices"
	"strings"

	"github.com/agentcanvas/agentcanvas/sidecar/internal/tally"
)

// How many input tokens a model call can be billed for, at most, read from its request
// before it is sent (docs/agents.md, Gateway, says the same):
//
//   - text is at least one byte a token, so the request's size bounds it, with a margin for
//     what the provider adds (its own system prompt, tool-use framing);
//   - an image counts imageTokens more (the providers scale images down to about 1,600);
//   - what the request only points to, or whose tokens its size does not bound (a PDF's
//     pages, audio, video, a file or a cache the provider holds, a stored conversation), can
//     be the whole context window, and is counted so;
//   - no call can be billed for more than its provider's largest context window.

const (
	// overheadTokens is what a provider adds to a request's own tokens, at most.
	overheadTokens = 2_000
	// imageTokens is an image's tokens, at most.
	imageTokens = 10_000
	// toolTokens is what a provider-side tool (a web search) adds to a call's input: its
	// results, which the request does not show. An estimate, not a bound.
	toolTokens = 100_000
)

// windows are each provider's largest context window: no call is billed more input.
var windows = map[Provider]int64{
	Anthropic: 1_000_000, // the pinned Claude Code's newer models take a million tokens without a beta
	OpenAI:    1_050_000,
	Gemini:    2_097_152,
}

// inputBound is the most input tokens a request of size bytes can be billed for; media are
// its content members' images and unbounded content (mediaIn).
func inputBound(p Provider, size int, images int, unbounded string, tools int) int64 {
	if unbounded != "" {
		return windows[p]
	}
	n := tally.Sum(int64(size), overheadTokens, int64(images)*imageTokens, int64(tools)*toolTokens)
	return min(n, windows[p])
}

// Content whose tokens a request's size does not bound, by the JSON strings that name it:
// values (a part's type, a MIME type) and member names.
var (
	unboundedValues = []string{"document", "file", "input_file", "input_audio", "url", "container_upload", "item_reference"}
	unboundedMimes  = []string{"application/pdf", "audio/", "video/"}
	unboundedNames  = []string{"fileData", "file_data", "fileUri", "file_uri", "file_id", "file_url", "video_url", "cachedContent", "cached_content"}
	imageValues     = []string{"image", "input_image", "image_url"}
)

// mediaIn reads a request's content (its messages, not its tool definitions) for images,
// and for content its size does not bound (unbounded names the first such). It reads every
// JSON string of content as the provider would, escapes decoded, so a name spelled with
// \u escapes is still seen; a string of a part's text that merely says "document" is
// counted too, which errs on reserving more.
func mediaIn(content []byte) (images int, unbounded string) {
	eachString(content, func(lit []byte, isName bool) bool {
		text, _ := stringValue(lit)
		switch { // values in any case: MIME types are ("VIDEO/MP4")
		case isName && slices.Contains(unboundedNames, text):
			unbounded = text
		case !isName && (containsFold(unboundedValues, text) || hasPrefixFold(text, unboundedMimes...)):
			unbounded = text
		case !isName && (containsFold(imageValues, text) || hasPrefixFold(text, "image/")):
			images++
		}
		return unbounded == ""
	})
	return images, unbounded
}

// stringEnd is the index of the quote that ends the JSON string starting at b[i] (-1: none):
// the next quote not escaped by an odd run of backslashes.
func stringEnd(b []byte, i int) int {
	for j := i + 1; j < len(b); {
		k := bytes.IndexByte(b[j:], '"')
		if k < 0 {
			return -1
		}
		q := j + k
		n := 0
		for q-1-n > i && b[q-1-n] == '\\' {
			n++
		}
		if n%2 == 0 {
			return q
		}
		j = q + 1
	}
	return -1
}

func nextNonSpace(b []byte, i int) byte {
	for ; i < len(b); i++ {
		switch b[i] {
		case ' ', '\t', '\n', '\r':
		default:
			return b[i]
		}
	}
	return 0
}

// containsFold reports whether list holds s, in any case.
func containsFold(list []string, s string) bool {
	return slices.ContainsFunc(list, func(x string) bool { return strings.EqualFold(x, s) })
}

// hasPrefixFold reports whether s starts with one of prefixes, in any case.
func hasPrefixFold(s string, prefixes ...string) bool {
	return slices.ContainsFunc(prefixes, func(p string) bool { return len(s) >= len(p) && strings.EqualFold(s[:len(p)], p) })
}

func hasAnyPrefix(s string, prefixes []string) bool {
	for _, p := range prefixes {
		if strings.HasPrefix(s, p) {
			return true
		}
	}
	return false
}

// asksHourCache reports whether a request asks for a cache write kept longer than five
// minutes: a "ttl" member (escapes decoded) whose value is not "5m". Anthropic's one-hour
// writes cost twice the input price.
func asksHourCache(b []byte) bool {
	if !bytes.Contains(b, []byte("ttl")) && !bytes.Contains(b, []byte(`\u`)) {
		return false // the name is in neither spelling
	}
	hour, afterTTL := false, false
	eachString(b, func(lit []byte, isName bool) bool {
		switch {
		case afterTTL && isName: // its value was not a string: read as the dearer
			hour = true
		case afterTTL:
			hour = !litIs(lit, "5m")
		}
		afterTTL = isName && litIs(lit, "ttl")
		return !hour
	})
	return hour
}

// litIs reports whether the JSON string literal lit (quotes included) reads as one of
// names, escapes decoded; without escapes, it is compared where it lies, nothing copied.
func litIs(lit []byte, names ...string) bool {
	inner := lit[1 : len(lit)-1]
	if bytes.IndexByte(inner, '\\') < 0 {
		return slices.Contains(names, string(inner))
	}
	s, _ := stringValue(lit)
	return slices.Contains(names, s)
}
