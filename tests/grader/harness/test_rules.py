"""The static half of an exercise's rules: every way the issue's attacks name a banned API is found."""
from __future__ import annotations

import pytest

from grader.harness.rules import refusal, refused_import, violations

REASON = {"en": "do it yourself", "zh-hans": "自己动手"}
RULES = [
    {"modules": ["torch.utils.checkpoint"], "attributes": [], "calls": [], "reason": REASON},
    {"modules": [], "attributes": ["numpy.broadcast_shapes", "torch.autograd.functional.hvp"], "calls": ["exec"],
     "reason": {"en": "numpy would do it", "zh-hans": "numpy 会替你做"}},
]

REFUSED = {
    "import_as": "import torch.utils.checkpoint as c\n",
    "import_plain": "import torch.utils.checkpoint\n",
    "from_import": "from torch.utils import checkpoint\n",
    "from_import_name": "from torch.utils.checkpoint import checkpoint as run\n",
    "from_import_alias": "from numpy import broadcast_shapes as b\n",
    "attribute_chain": "import torch\n\ndef f(fn, x):\n    return torch.utils.checkpoint.checkpoint(fn, x)\n",
    "module_alias": "import numpy as np\nshape = np.broadcast_shapes((2, 1), (3,))\n",
    "assigned_alias": "import torch\nu = torch.utils\nrun = u.checkpoint\n",
    "getattr_chain": "import torch\nrun = getattr(getattr(torch, 'utils'), 'checkpoint')\n",
    "getattr_alias": "import numpy as np\nb = getattr(np, 'broadcast_shapes')\n",
    "dunder_import": "c = __import__('torch.utils.checkpoint', fromlist=['checkpoint'])\n",
    "importlib": "import importlib\nc = importlib.import_module('torch.utils.checkpoint')\n",
    "importlib_relative": "import importlib\nc = importlib.import_module('.checkpoint', 'torch.utils')\n",
    "importlib_alias": "from importlib import import_module as load\nc = load('torch.utils.checkpoint')\n",
    "string_spelled": "import sys\nc = sys.modules['torch.utils.checkpoint']\n",
    "star_import": "from numpy import *\n",
    "deeper_attribute": "import torch\nh = torch.autograd.functional.hvp\n",
    "setattr_replaces_it": "import torch.utils\nsetattr(torch.utils, 'checkpoint', None)\n",
    "banned_call": "exec('x = 1')\n",
    "banned_call_by_builtins": "import builtins\nbuiltins.exec('x = 1')\n",
}


@pytest.mark.parametrize("source", REFUSED.values(), ids=REFUSED.keys())
def test_each_way_of_naming_a_banned_api_is_found(source):
    assert violations(source, RULES), source


def test_a_violation_names_the_rule_the_api_and_the_line():
    found = violations("import torch\n\nx = 1\nrun = torch.utils.checkpoint.checkpoint\n", RULES)
    assert [(v.rule, v.api, v.line) for v in found] == [(0, "torch.utils.checkpoint", 4)]
    found = violations("from numpy import broadcast_shapes as b\n", RULES)
    assert [(v.rule, v.api, v.line) for v in found] == [(1, "numpy.broadcast_shapes", 1)]


KEPT = {
    "own_function_named_like_the_module": "def checkpoint(fn, *args):\n    return fn(*args)\n",
    "other_parts_of_torch": "import torch\nimport torch.utils.data\ng = torch.autograd.grad\n",
    "other_numpy": "import numpy as np\nx = np.broadcast_to(np.ones(2), (3, 2))\n",
    "a_docstring_that_mentions_it": '"""Unlike torch.utils.checkpoint, this keeps..."""\n',
    "a_function_docstring": 'def f():\n    """Not numpy.broadcast_shapes."""\n',
    "exec_as_an_attribute_name": "class A:\n    def exec(self):\n        pass\n\nA().exec()\n",
    "a_syntax_error": "def (:\n",
}


@pytest.mark.parametrize("source", KEPT.values(), ids=KEPT.keys())
def test_sources_that_keep_the_rules_pass(source):
    assert violations(source, RULES) == []


def test_no_rules_no_check():
    assert violations("import torch.utils.checkpoint\n", []) == []


def test_the_refusal_speaks_both_languages_with_the_rules_reason():
    message = refusal("from numpy import broadcast_shapes\n", RULES)
    assert message is not None and message.id == "rules.refused"
    assert message.params == {"api": "numpy.broadcast_shapes", "line": 1, "reason": RULES[1]["reason"]}
    assert "numpy.broadcast_shapes (line 1)" in str(message) and "numpy would do it" in str(message)
    assert refusal("x = 1\n", RULES) is None


def test_a_refused_import_is_worded_by_the_judge_not_by_the_students_process():
    message = refused_import("RuleViolation", "0:torch.utils.checkpoint: not allowed in this exercise", RULES)
    assert message is not None and message.id == "rules.refused_import"
    assert message.params == {"api": "torch.utils.checkpoint", "reason": REASON}
    # What the student's process could forge: another error, a name no rule bans, a rule that does not exist.
    assert refused_import("ImportError", "0:torch.utils.checkpoint: x", RULES) is None
    assert refused_import("RuleViolation", "0:<script>alert(1)</script>: x", RULES) is None
    assert refused_import("RuleViolation", "7:torch.utils.checkpoint: x", RULES) is None
    assert refused_import("RuleViolation", "1:numpy.broadcast_shapes: x", RULES) is None  # an attribute, not a module
