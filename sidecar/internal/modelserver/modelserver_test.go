package modelserver

import (
	"fmt"
	"io"
	"net/http"
	"runtime"
	"strings"
	"testing"
)

// The servers without a CLI: each API's request shape finds its conversation and turn, the
// working folder is put into the calls, errors are served FailTimes times, and a request the
// script cannot answer is refused (the real CLIs' tests are in sidecar/runtime and engine).

type apiCase struct {
	api         API
	path        string
	first, next string // a request opening the conversation, and one after a model turn
	wantCall    string // in the first response
}

var apiCases = []apiCase{
	{MessagesAPI, "/v1/messages?beta=true",
		`{"model":"m","stream":true,"messages":[{"role":"user","content":[{"type":"text","text":"task A"}]},{"role":"system","content":"Primary working directory: /w/a"}]}`,
		`{"model":"m","stream":true,"messages":[{"role":"user","content":"task A Primary working directory: /w/a"},{"role":"assistant","content":[{"type":"tool_use"}]},{"role":"user","content":[{"type":"tool_result"}]}]}`,
		`"partial_json":"{\"content\":\"hi\\n\",\"file_path\":\"/w/a/hello.txt\"}"`},
	{ResponsesAPI, "/v1/responses",
		`{"model":"m","stream":true,"input":[{"type":"message","role":"user","content":[{"type":"input_text","text":"<cwd>/w/a</cwd> task A"}]}]}`,
		`{"model":"m","stream":true,"input":[{"type":"message","role":"user","content":[{"type":"input_text","text":"<cwd>/w/a</cwd> task A"}]},{"type":"custom_tool_call"},{"type":"custom_tool_call_output"}]}`,
		`"input":"*** Begin Patch\n*** Add File: hello.txt\n+hi\n*** End Patch\n"`},
	{GeminiAPI, "/v1beta/models/g:streamGenerateContent?alt=sse",
		`{"contents":[{"role":"user","parts":[{"text":"task A\n- **Workspace Directories:**\n  - /w/a"}]}]}`,
		`{"contents":[{"role":"user","parts":[{"text":"task A\n- **Workspace Directories:**\n  - /w/a"}]},{"role":"model","parts":[{"functionCall":{}}]},{"role":"user","parts":[{"functionResponse":{}}]}]}`,
		`"functionCall":{"args":{"content":"hi\n","file_path":"/w/a/hello.txt"},"name":"write_file"}`},
}

func cliOf(api API) CLI {
	for _, c := range CLIs {
		if c.API == api {
			return c
		}
	}
	panic(api)
}

func post(t *testing.T, url, body string) (int, string) {
	t.Helper()
	resp, err := http.Post(url, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func TestServersFollowTheScript(t *testing.T) {
	for _, c := range apiCases {
		t.Run(string(c.api), func(t *testing.T) {
			s := Start(t, c.api, Script{
				{Match: "task B", Replies: []Reply{{Text: "wrong conversation"}}},
				{Match: "task A", Replies: []Reply{
					{Calls: []Call{cliOf(c.api).WriteCall("hello.txt", "hi\n")}},
					{Text: "all done", Error: &APIError{Status: 529, Message: "busy"}, FailTimes: 1},
				}},
			})
			code, body := post(t, s.URL+c.path, c.first)
			if code != 200 || !strings.Contains(body, c.wantCall) {
				t.Errorf("first reply %d:\n%s\nwant %s", code, body, c.wantCall)
			}
			if code, body = post(t, s.URL+c.path, c.next); code != 529 || !strings.Contains(body, "busy") {
				t.Errorf("second request %d %s, want the scripted 529", code, body)
			}
			if code, body = post(t, s.URL+c.path, c.next); code != 200 || !strings.Contains(body, "all done") {
				t.Errorf("retried request %d %s", code, body)
			}
			rs := s.Requests()
			if len(rs) != 3 || rs[0].Cwd != "/w/a" || rs[0].Conversation != 1 || rs[0].Turn != 0 || rs[2].Turn != 1 || s.Answered() != 2 {
				t.Errorf("requests %+v, answered %d", rs, s.Answered())
			}
		})
	}
}

// A request past the script's end is refused and fails the test that ran it.
func TestServerRefusesWhatTheScriptDoesNotSay(t *testing.T) {
	c := apiCases[0]
	ft := &fakeT{TB: t}
	s := Start(ft, c.api, Script{{Match: "task A", Replies: []Reply{{Text: "only one"}}}})
	if code, body := post(t, s.URL+c.path, c.next); code != 400 || !strings.Contains(body, "has 1 replies") {
		t.Errorf("%d %s", code, body)
	}
	if len(ft.errors) != 1 {
		t.Errorf("test errors %q", ft.errors)
	}
}

type fakeT struct {
	testing.TB
	errors []string
}

func (f *fakeT) Errorf(format string, args ...any) { f.errors = append(f.errors, format) }

// A CLI that is not installed skips a plain go test and fails make test (RequireEnv), both
// saying how to install it.
func TestMissingCLISkipsOrFails(t *testing.T) {
	missing := CLI{Name: "no-such-cli", Package: "@agentcanvas/no-such-cli"}
	for _, required := range []bool{false, true} {
		v := ""
		if required {
			v = "required"
		}
		t.Setenv(RequireEnv, v)
		st := &stopT{TB: t}
		done := make(chan struct{})
		go func() { defer close(done); missing.Binary(st) }()
		<-done
		msg := st.skipped
		if required {
			msg = st.fatal
		}
		if msg == "" || !strings.Contains(msg, InstallHint) || !strings.Contains(msg, missing.Package) {
			t.Errorf("required=%v: skipped %q, failed %q", required, st.skipped, st.fatal)
		}
	}
}

// stopT records how a test would have stopped.
type stopT struct {
	testing.TB
	skipped, fatal string
}

func (s *stopT) Skip(args ...any)  { s.skipped = fmt.Sprint(args...); runtime.Goexit() }
func (s *stopT) Fatal(args ...any) { s.fatal = fmt.Sprint(args...); runtime.Goexit() }
