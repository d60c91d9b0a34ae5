package server

import (
	"context"
	"encoding/json"
	"net"
	"testing"
	"time"

	"go.lsp.dev/jsonrpc2"
	"go.lsp.dev/protocol"
)

// go.lsp.dev/protocol v1.0.1's cancellation, checked against the reasons the server keeps
// its own (cancelPreempter in server.go, README "Dependencies"): CancelParams cannot hold a
// request id beyond 32 bits, and protocol.CancelHandler answers such an id by returning an
// error from the notification, which ends a go.lsp.dev/jsonrpc2 connection. If this test
// fails after an upgrade, protocol's cancellation may have become usable: look again.
func TestProtocolCancellationLimits(t *testing.T) {
	big := json.RawMessage(`{"id":1099511627776}`) // 1<<40, a valid JSON-RPC id
	var cp protocol.CancelParams
	if err := protocol.Unmarshal(big, &cp); err == nil {
		t.Errorf("protocol.CancelParams decoded the id 1<<40 as %#v", cp.ID)
	}
	if got := decodeID(json.RawMessage("1099511627776")); got != jsonrpc2.NewNumberID(1<<40) {
		t.Errorf("decodeID(1<<40) = %v", got)
	}

	serverEnd, clientEnd := net.Pipe()
	t.Cleanup(func() { serverEnd.Close(); clientEnd.Close() })
	ctx := context.Background()
	server := jsonrpc2.NewConn(jsonrpc2.NewHeaderStream(serverEnd))
	server.Go(ctx, protocol.CancelHandler(jsonrpc2.MethodNotFoundHandler))
	client := jsonrpc2.NewConn(jsonrpc2.NewHeaderStream(clientEnd))
	client.Go(ctx, jsonrpc2.MethodNotFoundHandler)
	if err := client.Notify(ctx, "$/cancelRequest", big); err != nil {
		t.Fatal(err)
	}
	select {
	case <-server.Done():
	case <-time.After(deadline):
		t.Fatal("the connection survived protocol.CancelHandler's error")
	}
	if server.Err() == nil {
		t.Error("the connection ended without an error")
	}
	t.Logf("protocol.CancelHandler on the id 1<<40 ended the connection: %v", server.Err())
}

// go.lsp.dev/jsonrpc2 v1.0.1's header stream ends the connection on a malformed frame, the
// reason the server frames messages itself (stream.go), which answers it and reads on.
func TestJSONRPC2HeaderStreamEndsOnABadFrame(t *testing.T) {
	serverEnd, clientEnd := net.Pipe()
	t.Cleanup(func() { serverEnd.Close(); clientEnd.Close() })
	server := jsonrpc2.NewConn(jsonrpc2.NewHeaderStream(serverEnd))
	server.Go(context.Background(), jsonrpc2.MethodNotFoundHandler)
	go func() { _, _ = clientEnd.Write([]byte("Content-Length: twelve\r\n\r\n{}")) }()
	select {
	case <-server.Done():
	case <-time.After(deadline):
		t.Fatal("the connection survived a malformed header")
	}
	t.Logf("jsonrpc2's header stream on a malformed header: %v", server.Err())
}
