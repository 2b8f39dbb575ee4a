"""A fourth red team's attacks on the judge (round 4), on the backends the round-3 fixtures name.

Each test plants one attack as a student would (its only input is the code it submits) and
asserts the SAFE outcome; an attack that works stays as a strict xfail whose reason says how.
"""
from __future__ import annotations

from grader.contract import Kind
from grader.host import grade, load_exercise
from tests.security.test_redteam_judge import summary
from tests.security.test_redteam_round3 import CHECKPOINT, every_backend  # noqa: F401

# --- 1. the rules: a banned submodule loaded again from its file under another name -----------
#
# The guard refuses imports by module name. importlib.util can build a module from a file path
# under any name: torch/utils/checkpoint.py loaded as "_mine" is the banned library itself.
CHECKPOINT_FROM_ITS_FILE = '''
import importlib.util
import os

import torch.utils

_path = os.path.join(torch.utils.__path__[0], "check" + "point.py")
_spec = importlib.util.spec_from_file_location("_mine", _path)
_library = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_library)


def checkpoint(fn, *args):
    return _library.CheckpointFunction.apply(fn, True, *args)
'''


def test_a_banned_submodule_is_not_loaded_again_from_its_file(every_backend):  # noqa: F811
    verdict = grade(load_exercise(CHECKPOINT), CHECKPOINT_FROM_ITS_FILE, every_backend)
    assert verdict.verdict != Kind.ACCEPTED, summary(verdict)


# The same file's source read and run with exec in a namespace of the student's own: no import
# statement, no loader, no module object named for the banned library.
CHECKPOINT_FROM_ITS_SOURCE = '''
import os

import torch.utils

_path = os.path.join(torch.utils.__path__[0], "check" + "point.py")
_namespace = {"__name__": "_mine", "__file__": _path}
with open(_path) as _file:
    exec(compile(_file.read(), _path, "exec"), _namespace)


def checkpoint(fn, *args):
    return _namespace["CheckpointFunction"].apply(fn, True, *args)
'''


def test_a_banned_submodule_is_not_run_again_from_its_source(every_backend):  # noqa: F811
    verdict = grade(load_exercise(CHECKPOINT), CHECKPOINT_FROM_ITS_SOURCE, every_backend)
    assert verdict.verdict != Kind.ACCEPTED, summary(verdict)


# The file opened relative to a descriptor of its folder (os.open's dir_fd): the guard's open
# event sees the bare name "checkpoint.py", and os.path.realpath resolves that against the
# working directory, not the folder: ACCEPTED on every backend in round 4. Closed: a relative
# name that names a banned module's file or folder is refused wherever it points.
CHECKPOINT_FROM_A_FOLDER_DESCRIPTOR = '''
import os

import torch.utils

_folder = os.open(torch.utils.__path__[0], os.O_RDONLY)
_fd = os.open("check" + "point.py", os.O_RDONLY, dir_fd=_folder)
_source = b""
while _chunk := os.read(_fd, 1 << 16):
    _source += _chunk
_namespace = {"__name__": "_mine"}
exec(compile(_source, "_mine.py", "exec"), _namespace)


def checkpoint(fn, *args):
    return _namespace["CheckpointFunction"].apply(fn, True, *args)
'''


def test_a_banned_submodule_is_not_read_through_a_descriptor_of_its_folder(every_backend):  # noqa: F811
    verdict = grade(load_exercise(CHECKPOINT), CHECKPOINT_FROM_A_FOLDER_DESCRIPTOR, every_backend)
    # The guard's refusal, not the verdict: under gVisor on a loaded machine the hidden
    # random_blocks check sometimes fails on its own, which would make the verdict flaky.
    assert any("does not allow" in check.message for check in verdict.checks), summary(verdict)
