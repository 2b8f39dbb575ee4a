"""The static half of an exercise's rules: does the student's source name an API it may not use?

    found = violations(source, manifest["rules"])    # [] when the source keeps every rule

Read from the syntax tree before the student's module runs (the audit hook of contract.start_ruled is
the other half, at run time). A name is followed through what the source does with it:
``import torch.utils.checkpoint as c``, ``from numpy import broadcast_shapes as b``,
``u = torch.utils; u.checkpoint``, ``getattr(np, "broadcast_shapes")``, ``setattr(torch, "compile", f)``,
``__import__("torch.utils.checkpoint")``, ``importlib.import_module(...)``, a star import
from a module that holds a banned name, and any string (but a docstring) that spells a
banned name. What the source computes at run time (a name built from pieces) is the
audit hook's to refuse. The reading itself is the grading contract's (grader/contract.py), so
the host proves with the same code that the reference solution keeps its own rules; here it
becomes the judge's refusal, a message in every language.
"""
from __future__ import annotations

from collections.abc import Sequence

from grader.contract import RULE_VIOLATION, Rule, Violation, banned_name, names_of, violations
from grader.harness.messages import Message

__all__ = ["Violation", "banned_name", "names_of", "refusal", "refused_import", "violations"]


def refusal(source: str, rules: Sequence[Rule]) -> Message | None:
    """The message that refuses ``source`` before it runs (its first violation), or None."""
    found = violations(source, rules)
    if not found:
        return None
    first = found[0]
    return Message("rules.refused", api=first.api, line=first.line, reason=dict(rules[first.rule]["reason"]))


def refused_import(type_name: str, message: str, rules: Sequence[Rule]) -> Message | None:
    """The message for an import the student's process refused (contract.start_ruled), or None when the
    error is not one. The error comes from the student's process: only a module the rules
    ban is ever named, and the reason is the exercise's, never the process's words."""
    if type_name != RULE_VIOLATION:
        return None
    number, _, rest = message.partition(":")
    module = rest.split(":")[0]
    if not number.isdigit() or int(number) >= len(rules) or module not in rules[int(number)]["modules"]:
        return None
    return Message("rules.refused_import", api=module, reason=dict(rules[int(number)]["reason"]))
