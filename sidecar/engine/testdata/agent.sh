#!/usr/bin/env bash
# A scripted agent for the engine's end-to-end tests: it answers by AGENTCANVAS_ROLE,
# AGENTCANVAS_AGENT_ID and how many turns it has had, printing the markers of
# patterns/P*.md, and records every turn ("<agent> <role> <round>") to $AC_DIR/turns and its
# prompt to $AC_DIR/<agent>.<turn>.prompt.
set -u
id=$AGENTCANVAS_AGENT_ID
role=$AGENTCANVAS_ROLE
prompt=$(cat)
exec 9>>"$AC_DIR/lock"
flock 9
n=$(grep -c "^$id " "$AC_DIR/turns" 2>/dev/null)
n=${n:-0}
echo "$id $role $AGENTCANVAS_ROUND" >>"$AC_DIR/turns"
flock -u 9
printf '%s' "$prompt" >"$AC_DIR/$id.$n.prompt"
has() { grep -q -- "$1" <<<"$prompt"; }

# Members named on the prompt's "Team: a, b" line, one ASSIGN line each.
assign() {
	grep -o 'Team: .*' <<<"$prompt" | head -1 | sed 's/^Team: //' | tr ',' '\n' |
		while read -r m; do [ -n "$m" ] && echo "ASSIGN $m: part of the task for $m"; done
}

# With $AC_DIR/edit, the defender and the executor edit a file in their sandbox, and hand off
# nothing.
quiet_edit() { [ -e "$AC_DIR/edit" ] && echo "edit by $id" >"work-$id.txt"; }

# A worker edits a file in its sandbox and hands off. With $AC_DIR/selfedit it also raises
# the limits of the flow that governs it and plants a file (a proposal that must be held).
handoff() {
	echo "edit by $id" >"work-$id.txt"
	if [ -e "$AC_DIR/selfedit" ] && [ -e flows/self.yaml ]; then
		echo "# maxCostUsd: 10000, network: open" >>flows/self.yaml
		mkdir -p src && echo "import os" >src/backdoor.py
	fi
	cat <<EOH
HANDOFF
Context:        scripted $id
Goal:           a small edit
DoD:            work-$id.txt exists
SandboxWorkDir: .agentcanvas/sandboxes/$AGENTCANVAS_RUN_ID/$id/work
ProposalJson:   .agentcanvas/sandboxes/$AGENTCANVAS_RUN_ID/$id/proposal/proposal.json
ChangedFiles:
  - work-$id.txt
Tests:
  - (none)
Next:
  - Orchestrator: review
EOH
}

case "$role" in
manager | root | sub_manager)
	if has "call for proposals"; then echo "PERFORMATIVE: cfp"; echo "Bid on the task with your cost."
	elif has "Award the contract"; then if has "bidder_2"; then echo "DECISION: bidder_2"; else echo "DECISION: $(grep -o 'bidder[_0-9]*' <<<"$prompt" | head -n 1)"; fi
	elif has "Review your team" && [ -e "$AC_DIR/reject" ]; then echo "ACCEPT worker_1: fine"; echo "REJECT worker_2: the edit is wrong"; echo "METRIC: tests_passed=1"
	elif has "Review your team"; then echo "ACCEPT all"; echo "METRIC: tests_passed=1"
	else assign; fi ;;
worker) echo "did my part"; handoff ;;
user) if [ "$n" -eq 0 ]; then echo "Instruction: write hello"; else echo "<CAMEL_TASK_DONE>"; fi ;;
assistant) echo "Solution: hello $n. Next request." ;;
planner | designer | coder | tester | doc_writer)
	if has ": instruct "; then echo "Instruction from $id"
	elif [ "$role" = designer ] && [ "$n" -eq 0 ]; then echo "still designing"
	else echo "<INFO> $id concluded"; fi ;;
pm) echo "PRD for the task"; echo "METRIC: artifact_valid=1" ;;
architect) echo "system design"; echo "METRIC: artifact_valid=1" ;;
engineer) echo "code v$n"; echo "METRIC: artifact_valid=1" ;;
qa) if [ "$n" -eq 0 ]; then echo "tests fail"; echo "METRIC: artifact_valid=0"; else echo "tests pass"; echo "METRIC: artifact_valid=1"; fi ;;
debater) if [ "$id" = debater_2 ] && [ "$n" -eq 0 ]; then echo "ANSWER: 5"; else echo "ANSWER: 4"; fi ;;
judge)
	case "$AGENTCANVAS_INTERACTION_ID" in
	*) if has "Decide the debate"; then echo "DECISION: debater_1"; echo "REASON: sound"
	elif has "Score how well"; then if [ "$n" -eq 0 ]; then echo "METRIC: score=5"; echo "STANDING: 1"; else echo "METRIC: score=8"; echo "STANDING: none"; fi
	elif has "Find the errors"; then if [ "$n" -eq 0 ]; then echo "METRIC: open_errors=2"; echo "step 2 is wrong"; else echo "METRIC: open_errors=0"; fi
	elif has "Accept the answer"; then if [ "$n" -eq 0 ]; then echo "DECISION: revise 2"; else echo "DECISION: accept"; fi
	fi ;;
	esac ;;
critic) echo "step 2: use the other formula" ;;
refiner) echo "revised solution $n" ;;
curator)
	if has "Merge the members"; then printf '## MEMORY\n- durable fact from %s\n## NOTES\n- synced\n' "$id"
	else echo "Lesson: check step 2 first"; fi ;;
voter) if has "Propose an answer"; then if [ "$id" = voter_3 ]; then echo "PROPOSAL: blue"; else echo "PROPOSAL: red"; fi
	elif [ "$id" = voter_3 ]; then echo "VOTE: blue"; else echo "VOTE: red"; fi ;;
tiebreak) echo "DECISION: red" ;;
sampler) case "$id" in sampler_4) echo "ANSWER: 41" ;; sampler_5) echo "no idea" ;; *) echo "reasoning"; echo "ANSWER:  42 " ;; esac ;;
bidder)
	if has "accept-proposal"; then echo "PERFORMATIVE: inform-done"; handoff
	elif [ "$id" = bidder_3 ]; then echo "PERFORMATIVE: refuse"; echo "busy"
	else echo "PERFORMATIVE: propose"; if [ "$id" = bidder_2 ]; then echo "COST: 10"; else echo "COST: 20"; fi; fi ;;
haggler) echo "{\"act\": \"counteroffer\", \"terms\": {\"price\": $n}}" ;;
proposer) if [ "$n" -eq 0 ]; then echo '{"act": "offer", "terms": {"price": 10}}'; else echo '{"act": "offer", "terms": {"price": 9}}'; fi ;;
responder) if [ "$n" -eq 0 ]; then echo '{"act": "counteroffer", "terms": {"price": 8}}'; else echo '{"act": "accept"}'; fi ;;
knowledge_source)
	case "$id" in knowledge_source_1) echo "POST hypothesis: h1" ;; knowledge_source_2) echo "POST partial_result: p2" ;; *) echo "POST solution: s3" ;; esac ;;
publisher) if [ "$n" -eq 0 ]; then printf 'PUBLISH updates: u1\nPUBLISH updates: u2\n'; else echo "PUBLISH updates: u3"; fi ;;
subscriber)
	if [ "$id" = subscriber_2 ] || [ "$n" -ge 2 ]; then echo "UNSUBSCRIBE updates"
	elif [ "$n" -eq 0 ]; then echo "REPLY: thanks"; else echo "noted"; fi ;;
requester) if [ "$n" -lt 2 ]; then echo "REQUEST provider: question $n"; else echo "nothing more"; fi ;;
provider) echo "answer from $id" ;;
peer)
	if [ -e "$AC_DIR/badtype" ] && [ "$id" = peer_3 ] && [ "$n" -eq 0 ]; then
		echo '{"to": ["peer_1"], "type": "task_assignment", "text": "do my work"}'
	elif [ -e "$AC_DIR/burst" ] && [ "$id" = peer_1 ] && [ "$n" -eq 0 ]; then
		for i in $(seq 1 15); do echo "{\"to\": [\"peer_2\"], \"text\": \"burst $i\"}"; done
	elif [ "$n" -eq 0 ]; then
		case "$id" in peer_1) echo '{"to": ["peer_2"], "text": "hi 2"}' ;; peer_2) echo '{"to": ["peer"], "text": "to all peers"}' ;; *) echo '{"to": ["nobody"], "text": "lost"}' ;; esac
	else echo "nothing to send"; fi ;;
red_team) echo "ATTACK 1: injection — send a quote" ;;
defender) quiet_edit; echo "ATTACK 1: escaped the quote" ;;
producer) if [ "$n" -eq 0 ]; then printf 'CLAIM: water boils at 100C [1]\nCLAIM: the moon is cheese https://x.example\n'; else printf 'CLAIM: water boils at 100C [1]\nCLAIM: the moon is rock https://nasa.example\n'; fi ;;
verifier) if [ "$n" -eq 0 ]; then printf 'CHECK 1: pass — handbook\nCHECK 2: fail — it is rock\n'; else printf 'CHECK 1: pass — handbook\nCHECK 2: pass — nasa\n'; fi ;;
executor) quiet_edit; echo "ran the plan" ;;
observer) echo "observed: ok" ;;
reflector) echo "reflection: keep steps small" ;;
member) echo "- $id learned a fact" ;;
local_agent) echo "pong" ;;
sleeper) sleep 1000 & echo $! >"$AC_DIR/grandchild.pid"; echo $$ >"$AC_DIR/child.pid"; wait ;;
*) echo "unknown role $role" ;;
esac
