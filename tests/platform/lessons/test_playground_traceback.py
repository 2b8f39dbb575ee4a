"""Issue 28, fix 5: playground tracebacks showed sandbox/zygote.py and runpy frames."""
from lessons.runs import without_sandbox_frames

TRACEBACK = """Traceback (most recent call last):
  File "/usr/lib/python3.11/runpy.py", line 198, in _run_module_as_main
    return _run_code(code, main_globals, None,
           ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^
  File "/opt/graphdojo/sandbox/zygote.py", line 88, in _child
    runpy.run_path(path, run_name="__main__")
  File "<frozen runpy>", line 291, in run_path
  File "/work/main.py", line 3, in <module>
    y = f(x)
        ^^^^
  File "/work/main.py", line 1, in f
    def f(x): return x / 0
                     ~~^~~
ZeroDivisionError: division by zero
"""


def test_only_the_students_frames_are_left():
    assert without_sandbox_frames(TRACEBACK) == """Traceback (most recent call last):
  File "/work/main.py", line 3, in <module>
    y = f(x)
        ^^^^
  File "/work/main.py", line 1, in f
    def f(x): return x / 0
                     ~~^~~
ZeroDivisionError: division by zero
"""


def test_output_that_is_no_traceback_is_left_alone():
    assert without_sandbox_frames("warning: x\n    indented\n") == "warning: x\n    indented\n"
