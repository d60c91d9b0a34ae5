package gateway

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
)

// benchModel is a streamed Messages API reply: message_start at once (time to first
// token), then n text deltas of size bytes each, then message_delta with the usage. With a
// gate, the deltas wait until the agent has read the first event, so nothing else runs while
// the time and CPU to the first token are measured.
func benchModel(n, size int, gate ...chan struct{}) http.HandlerFunc {
	delta := "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"" + strings.Repeat("x", size) + "\"}}\n\n"
	return func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		f := w.(http.Flusher)
		fmt.Fprint(w, "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"model\":\"claude-sonnet-4-5\",\"usage\":{\"input_tokens\":1000,\"output_tokens\":1}}}\n\n")
		f.Flush()
		if len(gate) > 0 {
			<-gate[0]
		}
		for range n {
			fmt.Fprint(w, delta)
			f.Flush()
		}
		fmt.Fprint(w, "event: message_delta\ndata: {\"type\":\"message_delta\",\"usage\":{\"output_tokens\":5000}}\n\n")
	}
}

// benchBody is a turn the size of Claude Code's first (about 50 KB: its system prompt and
// tool definitions, and a conversation), so reading and checking it is measured too.
var benchBody = func() string {
	tools := strings.Repeat(`{"name":"Tool","description":"`+strings.Repeat("d", 900)+`","input_schema":{"type":"object","properties":{"file_path":{"type":"string"}}}},`, 30)
	return `{"model":"claude-sonnet-4-5","max_tokens":32000,"stream":true,"system":"` + strings.Repeat("s", 7000) +
		`","tools":[` + strings.TrimSuffix(tools, ",") + `],"messages":[{"role":"user","content":"` + strings.Repeat("u", 10000) + `"}]}`
}()

// cpuTime is the CPU the process (every goroutine: client, gateway, model) has used.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// streamOnce posts a turn to url and returns the time to the first byte of the body, the CPU
// used until then, and the bytes and time of the whole body.
func streamOnce(b *testing.B, client *http.Client, url, key string, gate chan struct{}) (ttft, cpu time.Duration, n int64, total time.Duration) {
	req, _ := http.NewRequest(http.MethodPost, url+"/v1/messages", strings.NewReader(benchBody))
	req.Header.Set("X-Api-Key", key)
	cpu0 := cpuTime()
	start := time.Now()
	resp, err := client.Do(req)
	if err != nil {
		b.Fatal(err)
	}
	defer resp.Body.Close()
	one := make([]byte, 1)
	if _, err := io.ReadFull(resp.Body, one); err != nil {
		b.Fatal(err)
	}
	ttft, cpu = time.Since(start), cpuTime()-cpu0
	gate <- struct{}{}
	rest, err := io.Copy(io.Discard, resp.Body)
	if err != nil || resp.StatusCode != 200 {
		b.Fatalf("%s: status %d: %v after %d bytes", url, resp.StatusCode, err, rest+1)
	}
	return ttft, cpu, rest + 1, time.Since(start)
}

// BenchmarkGatewayStream: a streamed turn (a 50 KB request, 1,000 deltas of 1 KiB back)
// directly from a model on loopback against through the gateway, alternately so machine load
// affects both alike, with a run budget so every call is read, reserved and capped. Reports
// the median time to first token of each, their difference (aim: < 1 ms), the CPU used until
// the first token through the gateway beyond direct (which the machine's load does not
// inflate), and the throughput of each.
func BenchmarkGatewayStream(b *testing.B) {
	gate := make(chan struct{}, 1)
	up := httptest.NewServer(benchModel(1000, 1024, gate))
	defer up.Close()
	g, err := Start(Options{Upstream: map[Provider]string{Anthropic: up.URL}})
	if err != nil {
		b.Fatal(err)
	}
	defer g.Close()
	g.Ledger.SetRunLimit(Limit{USD: 1e9})
	token, base := g.Register(Caller{Agent: "a", Interaction: "i", Keys: map[Provider]string{Anthropic: "sk-real"}})
	client := &http.Client{Transport: &http.Transport{}}
	defer client.CloseIdleConnections()
	var ttft, cpu [2][]time.Duration
	var bytes [2]int64
	var total [2]time.Duration
	for b.Loop() {
		for i, target := range []struct{ url, key string }{{up.URL, "sk-real"}, {base, token}} {
			t, c, n, d := streamOnce(b, client, target.url, target.key, gate)
			ttft[i], cpu[i] = append(ttft[i], t), append(cpu[i], c)
			bytes[i] += n
			total[i] += d
		}
	}
	med := func(d []time.Duration) float64 {
		slices.Sort(d)
		return float64(d[len(d)/2].Microseconds()) / 1000
	}
	direct, through := med(ttft[0]), med(ttft[1])
	b.ReportMetric(direct, "ttft-direct-ms")
	b.ReportMetric(through, "ttft-gateway-ms")
	b.ReportMetric(through-direct, "ttft-delta-ms")
	// The CPU until the first token, whoever used it: what the gateway adds whatever the load.
	b.ReportMetric(med(cpu[1])-med(cpu[0]), "cpu-to-first-token-delta-ms")
	b.ReportMetric(float64(bytes[0])/total[0].Seconds()/1e6, "MBps-direct")
	b.ReportMetric(float64(bytes[1])/total[1].Seconds()/1e6, "MBps-gateway")
	b.ReportMetric(0, "ns/op")
}
