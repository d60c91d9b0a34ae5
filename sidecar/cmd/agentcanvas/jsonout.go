package main

import (
	"encoding/json"
	"io"

	"github.com/agentcanvas/agentcanvas/sidecar/termsafe"
)

// jsonOut is the encoder of a command's stream of JSON values on stdout (run --json, validate
// --json, protocol scan --json…): the text of an agent or a file in them is written as \u
// escapes where a terminal would act on it (C1 controls, bidi and other format characters,
// which encoding/json leaves as they are), so the stream means the same to a program and
// shows as text on a terminal. One value is printed whole by printJSON the same way.
func jsonOut(w io.Writer) *json.Encoder {
	return json.NewEncoder(termsafe.JSONWriter(w))
}
