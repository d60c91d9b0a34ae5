#!/usr/bin/env bash
# The model gateway: a streamed model turn (a 50 KB request, 1,000 deltas of 1 KiB back,
# Anthropic Messages SSE) read directly from a model on loopback against through the gateway
# (with a budget, so the call is read, reserved and capped), alternately so machine load
# affects both alike. Prints the median time to first token of each and their difference
# (ttft-delta-ms; aim: < 1), the CPU the gateway adds until the first token
# (cpu-to-first-token-delta-ms: what the machine's load does not inflate), and the throughput
# of each (MBps-direct, MBps-gateway).
set -euo pipefail
cd "$(dirname "$0")/.."
go test -run '^$' -bench 'GatewayStream' -benchtime "${BENCHTIME:-100x}" -count "${COUNT:-3}" ./sidecar/gateway
