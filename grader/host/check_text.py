"""What a checks.py says to the student, read from its source: every text in every language.

The checks API takes a check's own words as one template per language
(``fail({"en": ..., "zh-hans": ...}, **params)``, ``what={"en": ..., "zh-hans": ...}``,
``localize(...)``, ``as_code(...)`` for a name that is code) and refuses English-only text
when it runs; this lint refuses it before anything runs, including on the paths no
solution, starter or mutant takes:

- ``fail`` and ``localize`` take a literal dict with a template per language, the same
  placeholders in each, and a keyword for every placeholder;
- ``what=`` of ``close``, ``equal`` and ``raises`` is a literal dict per language, a
  ``localize(...)`` or ``as_code(...)`` call or a name (checked when it runs), never a string;
- a checks.py never raises ``CheckFailed`` itself (``fail`` says it in every language);
- code in a text is marked with backticks (`` `execute()` ``), which come in pairs.

The rules themselves (every language, the same placeholders) are the grading contract's, so
this lint and the checks API at run time refuse the same texts.
"""
from __future__ import annotations

import ast

from grader.contract import UntranslatedText, check_localized, placeholders

_TEMPLATES = {"fail", "localize"}  # first argument: a template per language
_NAMING = {"close", "equal", "raises"}  # what=: a value's name per language
_STRING_NODES = (ast.JoinedStr, ast.BinOp)  # f"..." and "..." + ... / "..." % ...


def untranslated(source: str) -> list[str]:
    """Every place in ``source`` (a checks.py) that says something in fewer than every
    language, as "line N: what to fix"; empty when all is well."""
    problems: list[str] = []
    for node in ast.walk(ast.parse(source, "checks.py")):
        if not isinstance(node, ast.Call):
            continue
        name = _called(node)
        if name in _TEMPLATES:
            problems += [f"line {node.lineno}: {name}(): {p}" for p in _template_problems(node)]
        elif name in _NAMING:
            for keyword in node.keywords:
                if keyword.arg == "what":
                    problems += [f"line {node.lineno}: {name}(what=...): {p}" for p in _naming_problems(keyword.value)]
        elif name == "CheckFailed":
            problems.append(f'line {node.lineno}: raise no CheckFailed; call fail({{"en": ..., "zh-hans": ...}})')
    return problems


def _called(call: ast.Call) -> str | None:
    if isinstance(call.func, ast.Name):
        return call.func.id
    if isinstance(call.func, ast.Attribute):
        return call.func.attr
    return None


def _literal_dict(node: ast.expr) -> dict[str, str] | None:
    if not isinstance(node, ast.Dict):
        return None
    try:
        value = ast.literal_eval(node)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


def _template_problems(call: ast.Call) -> list[str]:
    if not call.args:
        return ['give the text as a first argument: {"en": "...", "zh-hans": "..."}']
    template = _literal_dict(call.args[0])
    if template is None:
        return ['the text must be a literal dict of string templates: {"en": "...{x}...", "zh-hans": "...{x}..."}']
    try:
        checked = check_localized(template)
    except UntranslatedText as error:
        return [str(error)]
    if unbalanced := _unbalanced_code(checked):
        return unbalanced
    if any(keyword.arg is None for keyword in call.keywords):
        return []  # **params: the names are known only when it runs
    given = {keyword.arg for keyword in call.keywords}
    missing = sorted(placeholders(checked["en"]) - given)
    return [f"the text fills {{{name}}}, but no {name}=... is given" for name in missing]


def _naming_problems(node: ast.expr) -> list[str]:
    if isinstance(node, ast.Constant) and isinstance(node.value, str) or isinstance(node, _STRING_NODES):
        return ['a string is English only; name the value in every language: {"en": "...", "zh-hans": "..."}']
    if isinstance(node, ast.Dict):
        value = _literal_dict(node)
        if value is None:
            return ['a dict of literal strings is needed: {"en": "...", "zh-hans": "..."}; use localize() for values']
        try:
            return _unbalanced_code(check_localized(value, is_template=False))
        except UntranslatedText as error:
            return [str(error)]
    return []  # a name or a localize(...) / as_code(...) call: checked when it runs (and the call above)


def _unbalanced_code(text: dict[str, str]) -> list[str]:
    """Code in a text is marked `like this`; a lone backtick would show the rest as code."""
    return [f"the {language} text {value!r} has an unpaired backtick (code is marked `like this`)"
            for language, value in text.items() if value.count("`") % 2]
