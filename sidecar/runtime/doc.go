// Package runtime runs one agent of a flow as a supervised operating-system process and turns
// what it prints into a clean stream of events for the run engine.
//
// An agent is started with Start(ctx, spec, prompt). The backend (spec.BackendID: claude,
// codex, gemini, command, dry-run or auto) decides the argv and how stdout is decoded: the
// JSON streams of the agent CLIs, or plain text for command and dry-run agents. Whatever the
// backend, the agent's TEXT is fed to the stdout-protocol parser ([USER_QUESTION],
// [DEPENDENCY_REQUEST], === PHASE N COMPLETE ===, [ERROR], HANDOFF), and the process is
// supervised as the specification asks: its own process group, paused with SIGTSTP while a
// question or dependency is pending (after a checkpoint callback), resumed with SIGCONT when
// answered, stopped with SIGTERM then SIGKILL, and never left orphaned: on Linux every agent
// is started through a small guardian (this same binary, re-executed; see guardian_linux.go)
// that is a child subreaper and kills the whole tree when the agent ends or the sidecar dies.
// A guardian runs one turn at a time and is kept for later turns (spawn_unix.go), so a turn
// costs about what starting its process directly costs.
//
// Answers reach the agent in one of two ways. Per-turn CLIs (claude, codex, gemini, and
// command agents whose stdin is closed after the prompt) get them in a follow-up turn: the
// CLI session is resumed (claude --resume, codex exec resume, gemini --resume) with the
// answers as the new prompt. Interactive command agents (runtime.interactive) keep stdin open
// and get the answers written there as the spec's JSON and [DEPENDENCY_PROVIDED] blocks.
//
// Secret values (spec.Env values and provided api_key/env_variable/service dependencies)
// reach only the agent's environment: they are never put on a command line, never written to
// disk by this package, and scrubbed from every event and error text.
package runtime
