"""What a verdict is: `Finding`, `Kind`, `Severity` (`findings.py`), the one outcome a finding
has (`outcome.py`), the three answers of `check` (`judgement.py`: clean, findings, not judged),
and what a rule and a finding kind declare (`kinds.py`: the rule registry's vocabulary).

The bottom of `analyses/`: may import nothing from the other analyses packages (only ir/,
facts/, render/words.py, limits.py, errors.py, and pydantic).
"""
