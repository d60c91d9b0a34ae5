package gateway

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"
)

// Content that names a URL for the provider to fetch: an image or a document by URL
// (Anthropic's source of type "url"), an image or a file by URL (OpenAI's input_image,
// input_file, a chat image_url), a file by URI (Gemini's fileData). The provider then
// reaches the network on the agent's behalf, with the URL the agent chose: for an agent
// whose own network is the gateway's port that is a way out for what it read, as the
// provider's web tools are, so the call is refused (docs/agents.md, Gateway). Only where
// the APIs take media is read: a URL in text, or in a tool's arguments, is fetched by no one.
// Inline data (a data: URL) and Gemini's own uploaded files stay.

// urlNames are the members whose value a provider may fetch.
var urlNames = []string{"url", "image_url", "file_url", "fileUri", "file_uri"}

// mayFetch reads content (a request's messages, as mediaIn does) for a member of urlNames
// holding anything but inline data: a quick look that spares the walk below most requests.
func mayFetch(content []byte) bool {
	if !slices.ContainsFunc([]string{"url", "uri", "Uri", `\u`}, func(x string) bool { return bytes.Contains(content, []byte(x)) }) {
		return false // none of urlNames, in either spelling
	}
	named, found := false, false // named: the last member's name is one of urlNames
	eachString(content, func(lit []byte, isName bool) bool {
		if isName {
			named = litIs(lit, urlNames...)
		} else if named {
			u, _ := stringValue(lit)
			found = !inline(u)
		}
		return !found
	})
	return found
}

// inline reports whether a media URL holds its data, or names a file Gemini holds.
func inline(u string) bool {
	return strings.HasPrefix(u, "data:") || strings.HasPrefix(u, "https://generativelanguage.googleapis.com/")
}

// fetches is the first URL r's content asks the provider to fetch ("" for none). An object
// on the way that repeats a member is taken as one: the provider may read either value.
func (r *modelRequest) fetches() string {
	switch {
	case r.p == Anthropic:
		content, dup := field(list(r.members["messages"]), "content")
		return firstFetch(dup, anthropicBlocks, append(content, r.members["system"])...)
	case r.chat:
		content, dup := field(list(r.members["messages"]), "content")
		return firstFetch(dup, chatParts, content...)
	case r.p == OpenAI:
		return firstFetch(false, responsesItems, r.members["input"])
	}
	return geminiFetches(r.members)
}

// geminiFetches reads a Gemini request's contents and system instruction (also those of a
// token count's generateContentRequest).
func geminiFetches(m map[string]json.RawMessage) string {
	parts, dup := field(list(m["contents"]), "parts")
	system, dup2 := field([]json.RawMessage{m["systemInstruction"], m["system_instruction"]}, "parts")
	if u := firstFetch(dup || dup2, geminiParts, append(parts, system...)...); u != "" {
		return u
	}
	for _, name := range []string{"generateContentRequest", "generate_content_request"} {
		if inner, dup := object(m[name]); dup {
			return repeated
		} else if inner != nil {
			if u := geminiFetches(inner); u != "" {
				return u
			}
		}
	}
	return ""
}

// repeated stands for a URL in an object that repeats a member.
const repeated = "(an object that repeats a member)"

func anthropicBlocks(content json.RawMessage) string {
	for _, raw := range list(content) {
		b, dup := object(raw)
		switch typ := str(b["type"]); {
		case dup:
			return repeated
		case typ == "image" || typ == "document":
			src, dup := object(b["source"])
			if _, named := src["url"]; dup || str(src["type"]) == "url" || named {
				return firstNonEmpty(str(src["url"]), repeated)
			}
		case typ == "tool_result":
			if u := anthropicBlocks(b["content"]); u != "" {
				return u
			}
		}
	}
	return ""
}

func chatParts(content json.RawMessage) string {
	for _, raw := range list(content) {
		p, dup := object(raw)
		if dup {
			return repeated
		}
		if str(p["type"]) != "image_url" {
			continue
		}
		u := str(p["image_url"]) // a string in some compatible APIs
		if iu, dup := object(p["image_url"]); dup {
			return repeated
		} else if iu != nil {
			u = str(iu["url"])
		}
		if !inline(u) {
			return firstNonEmpty(u, "(an image by URL)")
		}
	}
	return ""
}

// responsesItems reads the Responses API's input items, their content, and the output of
// tool calls (which may hold images and files too).
func responsesItems(input json.RawMessage) string {
	for _, raw := range list(input) {
		it, dup := object(raw)
		if dup {
			return repeated
		}
		if u := firstFetch(false, responsesItems, it["content"], it["output"]); u != "" {
			return u
		}
		switch str(it["type"]) {
		case "input_image":
			if u := str(it["image_url"]); u != "" && !inline(u) {
				return u
			}
		case "input_file":
			if _, named := it["file_url"]; named {
				return firstNonEmpty(str(it["file_url"]), "(a file by URL)")
			}
		}
	}
	return ""
}

func geminiParts(parts json.RawMessage) string {
	for _, raw := range list(parts) {
		p, dup := object(raw)
		if dup {
			return repeated
		}
		for _, name := range []string{"fileData", "file_data"} {
			fd, dup := object(p[name])
			if dup {
				return repeated
			}
			for _, uri := range []string{"fileUri", "file_uri"} {
				if u := str(fd[uri]); fd[uri] != nil && !inline(u) {
					return firstNonEmpty(u, "(a file by URI)")
				}
			}
		}
	}
	return ""
}

// firstFetch is the first URL read finds in raws (repeated when dup: an object that held
// them repeated a member).
func firstFetch(dup bool, read func(json.RawMessage) string, raws ...json.RawMessage) string {
	if dup {
		return repeated
	}
	for _, raw := range raws {
		if u := read(raw); u != "" {
			return u
		}
	}
	return ""
}

// list is a JSON list's elements (none for anything else).
func list(raw json.RawMessage) []json.RawMessage {
	xs, _ := elements(raw)
	return xs
}

// object is a JSON object's members (nil for anything else); dup: it repeats one.
func object(raw json.RawMessage) (map[string]json.RawMessage, bool) {
	m, dup, err := members(raw)
	if err != nil {
		return nil, false
	}
	return m, dup
}

// field is the member name of each object in raws; dup: one of them repeats a member.
func field(raws []json.RawMessage, name string) (out []json.RawMessage, dup bool) {
	for _, raw := range raws {
		m, d := object(raw)
		if m[name] != nil {
			out = append(out, m[name])
		}
		dup = dup || d
	}
	return out, dup
}

// str is a JSON string's value ("" for anything else).
func str(raw json.RawMessage) string {
	if len(raw) < 2 || raw[0] != '"' {
		return ""
	}
	s, _ := stringValue(raw)
	return s
}
