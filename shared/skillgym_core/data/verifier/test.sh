#!/usr/bin/env bash
# Trusted verifier entry point. Always leaves a reward file; a crash of the checks themselves
# (not of the agent's output) exits non-zero so reviewers can tell a broken checker apart.
mkdir -p /logs/verifier
rm -f /logs/verifier/reward.txt /logs/verifier/reward.json
cd /app 2>/dev/null || true
python3 /tests/verify.py
status=$?
if [ ! -s /logs/verifier/reward.json ] && [ ! -s /logs/verifier/reward.txt ]; then
  echo 0 > /logs/verifier/reward.txt
fi
exit $status
