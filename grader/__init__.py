"""How a submission is judged: exercise specs, the pipeline, verdicts, and the in-sandbox harness.

Kept free of imports: the harness runs this package inside the sandbox, where only the
standard library, numpy and torch exist.
"""
