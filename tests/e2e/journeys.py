"""Browser helpers shared by the end-to-end journeys (not a test module)."""

from playwright.sync_api import Locator, Page, expect

from accounts.services import demo_accounts_ensure


def log_in(page: Page, base_url: str) -> None:
    username, password, _ = next(a for a in demo_accounts_ensure() if a[2] == "student")
    page.goto(f"{base_url}/login/")
    page.get_by_label("Username").fill(username)
    page.get_by_label("Password").fill(password)
    page.get_by_role("button", name="Log in").click()
    expect(page.get_by_role("heading", name="Exercises")).to_be_visible()


def fill_answer(form: Locator, snapshot: dict, *, right: bool = True) -> None:
    """Answer one rendered question the way a student would: click, tick, pick or type."""
    kind, key = snapshot["type"], snapshot["key"]["answer"]
    ids = [c["id"] for c in snapshot["choices"]]
    if not right:  # a plausible wrong answer of the same kind
        if kind in ("single", "code_output") and ids:
            key = next(i for i in ids if i != key)
        elif kind == "multiple":
            key = [next(i for i in ids if i not in key)]
        elif kind == "true_false":
            key = not key
        elif kind == "numeric":
            key = key + 1000
        elif kind == "ordering":
            key = list(reversed(key))
        else:
            key = "something else"
    if kind == "single" or (kind == "code_output" and ids):
        form.locator(f'input[name="answer"][value="{key}"]').check()
    elif kind == "multiple":
        for choice_id in key:
            form.locator(f'input[name="answer"][value="{choice_id}"]').check()
    elif kind == "true_false":
        form.locator(f'input[name="answer"][value="{"true" if key else "false"}"]').check()
    elif kind == "ordering":
        for rank, choice_id in enumerate(key, start=1):
            form.locator(f'select[name="rank-{choice_id}"]').select_option(str(rank))
    elif kind == "numeric":
        form.locator('input[name="answer"]').fill(f"{key:g}")
    elif kind == "short_text":
        form.locator('input[name="answer"]').fill(str(key))
    else:
        form.locator('textarea[name="answer"]').fill(str(key))


def write_code(page: Page, code: str) -> None:
    """Put ``code`` in the exercise's editor, as pasting it would (the CodeMirror editor follows
    its form field; without JavaScript the field is the editor)."""
    page.locator("textarea[name=code]").evaluate(
        "(field, code) => { field.value = code; field.dispatchEvent(new Event('input')); }", code
    )
