#!/usr/bin/env bash
# A command agent (backendId command, interactive) that asks the user a question and then for an
# API key with the stdout protocol, waiting for each answer on stdin. Used by the e2e test.
cat <<'Q'
[USER_QUESTION]
category: choice
question: Which database should the service use?
options:
  - PostgreSQL
  - SQLite
default: SQLite
required: true
[/USER_QUESTION]
Q
# stdin carries the prompt first; the answer is the question_answer line.
answer=""
while IFS= read -r line; do
  case $line in *question_answer*) answer=$line; break ;; esac
done
echo "The user chose: $answer"
cat <<'D'
[DEPENDENCY_REQUEST]
type: api_key
name: E2E_SERVICE_KEY
description: Key for the (imaginary) database service
required: true
[/DEPENDENCY_REQUEST]
D
key=""
while IFS= read -r line; do
  case $line in value:*) key=${line#value: } ;; '[/DEPENDENCY_PROVIDED]'*) break ;; esac
done
echo "Got a key of ${#key} characters."
echo "DONE"
