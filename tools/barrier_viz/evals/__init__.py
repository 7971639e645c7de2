"""The eval harness: cases with known truth (cases), the mutation engine that makes them
(mutate), scoring (scoring) and the runners for deterministic and agent mode (runner).
`barrier-viz eval` (commands/eval_cmd.py) is the front end; tests/test_evals.py the CI gate."""
