#!/usr/bin/env bash
# Regenerate docs/samples from the shared corpus (run from anywhere; needs ../shared/corpus).
set -euo pipefail
cd "$(dirname "$0")/.."
env -u COLUMNS .venv/bin/barrier-viz report ../shared/corpus/real/fa_fwd_persist_sm100.ttgir > docs/samples/fa_fwd_persist_sm100.report.md
echo "wrote docs/samples/fa_fwd_persist_sm100.report.md"
