package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"go.lsp.dev/protocol"
)

// initializeHandler decodes initialize's params with decodeInitialize.
func initializeHandler(s *Server, ctx context.Context, params json.RawMessage) (any, error) {
	p, warning, err := decodeInitialize(params)
	if err != nil {
		return nil, err
	}
	if warning != "" {
		s.logMessage(msgWarning, warning)
	}
	return s.initialize(ctx, p)
}

// decodeInitialize reads initialize's params into protocol's type. go.lsp.dev/protocol decodes
// the client's whole capabilities, of which the server reads one (window.workDoneProgress): a
// capability it cannot decode (a client's typo, a value of a newer specification) must not
// refuse the session, so the capabilities are then left out, with a warning naming the field.
func decodeInitialize(params json.RawMessage) (*protocol.InitializeParams, string, error) {
	var p protocol.InitializeParams
	err := decodeLSP(params, &p)
	if err == nil {
		return &p, "", nil
	}
	var pe *paramsError
	var fields map[string]json.RawMessage
	if !errors.As(err, &pe) || !strings.HasPrefix(pe.msg, "/capabilities/") || json.Unmarshal(params, &fields) != nil {
		return nil, "", err
	}
	delete(fields, "capabilities")
	rest, _ := json.Marshal(fields) // raw values: cannot fail
	p = protocol.InitializeParams{}
	if err := decodeLSP(rest, &p); err != nil {
		return nil, "", err
	}
	return &p, fmt.Sprintf("initialize: the client's capabilities do not decode (%s); the server goes on as if the client had declared none", pe.msg), nil
}
