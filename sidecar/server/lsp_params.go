package server

import (
	"bytes"
	"context"
	"encoding/json"
	"regexp"
	"strconv"

	"github.com/go-json-experiment/json/jsontext"
	"go.lsp.dev/protocol"
)

// lsp adapts the handler of a standard LSP request: its params are decoded into
// go.lsp.dev/protocol's type with protocol's codec (absent params: the zero value), and its
// result, of protocol's types, is encoded by stdCodec with protocol's codec too.
func lsp[P, R any](h func(*Server, context.Context, *P) (R, error)) func(*Server, context.Context, json.RawMessage) (any, error) {
	return func(s *Server, ctx context.Context, params json.RawMessage) (any, error) {
		var p P
		if err := decodeLSP(params, &p); err != nil {
			return nil, err
		}
		r, err := h(s, ctx, &p)
		if err != nil {
			return nil, err
		}
		return r, nil
	}
}

// lspNotification is lsp for a standard LSP notification.
func lspNotification[P any](h func(*Server, context.Context, *P) error) func(*Server, context.Context, json.RawMessage) (any, error) {
	return func(s *Server, ctx context.Context, params json.RawMessage) (any, error) {
		var p P
		if err := decodeLSP(params, &p); err != nil {
			return nil, err
		}
		return nil, h(s, ctx, &p)
	}
}

// decodeLSP unmarshals params into a go.lsp.dev/protocol type; absent params decode as {}.
func decodeLSP(params json.RawMessage, v any) error {
	if len(params) == 0 {
		return nil
	}
	if err := protocol.Unmarshal(params, v); err != nil {
		if field := fieldAt(params, err); field != "" {
			return badParams("%s: %v", field, err)
		}
		return badParams("%v", err)
	}
	return nil
}

// offsetRe finds the byte offset in protocol's decode errors ("… at offset 55").
var offsetRe = regexp.MustCompile(`at offset (\d+)`)

// fieldAt names, as a JSON pointer ("/position/line"), the member of params at the offset a
// protocol decode error gives, which names no field itself; "" when it cannot tell.
func fieldAt(params []byte, err error) string {
	m := offsetRe.FindStringSubmatch(err.Error())
	if m == nil {
		return ""
	}
	off, _ := strconv.ParseInt(m[1], 10, 64)
	dec := jsontext.NewDecoder(bytes.NewReader(params))
	for dec.InputOffset() <= off {
		if _, err := dec.ReadToken(); err != nil {
			break
		}
	}
	return string(dec.StackPointer())
}
