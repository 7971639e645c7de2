"""`barrier-viz audit`: check every warp-specialized unit under some paths, as a CI gate.

discover (paths -> files -> units), cache (results by content hash), worker (one unit, in a
process, within a time budget), baseline (known findings by fingerprint). The command in
`commands/audit_cmd.py` ties them together; `render/sarif.py` and `render/junit.py` print.
"""
