#!/usr/bin/env bash
# A command agent (backendId command, interactive) that asks the user a question with the
# stdout protocol, waits for the answer on stdin, and reports it. Used by the e2e test.
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
echo "DONE"
