#!/usr/bin/env bash
# The `run` step of the composite action (action.yml): audit the IR, write SARIF, append the job
# summary, publish the outputs. Everything comes in through INPUT_* variables (set by the action
# from its inputs) so the same script runs locally: tests/test_action.py runs it with no network.
#
#   INPUT_PATHS       whitespace-separated files or folders of IR (required)
#   INPUT_BASELINE    a baseline file from `audit --write-baseline` (optional)
#   INPUT_BUDGET      interpreter steps per kernel (default 500000)
#   INPUT_SARIF       where to write the SARIF (default barrier-viz.sarif)
#   INPUT_JOBS        worker processes (default: the CPU count)
#   BARRIER_VIZ       the command to run (default barrier-viz)
#   GITHUB_STEP_SUMMARY, GITHUB_OUTPUT: set by GitHub Actions; a local run may point them at files.
#
# Exit status: audit's (0 ok, 1 a new error finding, 2 bad usage); the action decides whether
# a 1 fails the job (input fail-on-findings).
set -uo pipefail

if [ -z "${INPUT_PATHS:-}" ]; then
    echo "barrier-viz action: the 'paths' input is empty" >&2
    exit 2
fi
read -r -a cmd <<< "${BARRIER_VIZ:-barrier-viz}"
read -r -a paths <<< "$(echo "$INPUT_PATHS" | tr '\n' ' ')"
sarif="${INPUT_SARIF:-barrier-viz.sarif}"
args=(audit "${paths[@]}" --format sarif --output "$sarif" --budget "${INPUT_BUDGET:-500000}")
if [ -n "${INPUT_BASELINE:-}" ]; then
    args+=(--baseline "$INPUT_BASELINE")
fi
if [ -n "${INPUT_JOBS:-}" ]; then
    args+=(--jobs "$INPUT_JOBS")
fi
if [ -n "${GITHUB_STEP_SUMMARY:-}" ]; then
    args+=(--summary "$GITHUB_STEP_SUMMARY")
fi

"${cmd[@]}" "${args[@]}"
rc=$?
if [ -n "${GITHUB_OUTPUT:-}" ]; then
    {
        echo "exit-code=$rc"
        echo "sarif=$sarif"
    } >> "$GITHUB_OUTPUT"
fi
exit "$rc"
