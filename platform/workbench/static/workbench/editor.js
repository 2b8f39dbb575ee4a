// Turns every <textarea data-editor> into a CodeMirror editor. The textarea stays the form
// field (kept in sync on every change), so the form works the same with or without this file.
(function () {
  "use strict";
  if (!window.CM) return;
  const { EditorView, EditorState, basicSetup, python, keymap, indentWithTab, indentUnit, lintGutter, setDiagnostics,
    HighlightStyle, syntaxHighlighting, tags } = window.CM;

  // Token colours that keep at least 4.5:1 contrast on white (CodeMirror's defaults do not all).
  const readable = HighlightStyle.define([
    { tag: tags.keyword, color: "#6f2da8" },
    { tag: [tags.string, tags.special(tags.string)], color: "#a3300b" },
    { tag: tags.comment, color: "#5b6070", fontStyle: "italic" },
    { tag: [tags.number, tags.bool, tags.null], color: "#14643a" },
    { tag: [tags.definition(tags.variableName), tags.function(tags.definition(tags.variableName))], color: "#1b4fb0" },
    { tag: [tags.className, tags.definition(tags.className)], color: "#0d5c63" },
    { tag: [tags.operator, tags.punctuation], color: "#3a4150" },
  ]);

  function csrfToken() {
    const field = document.querySelector("input[name=csrfmiddlewaretoken]");
    return field ? field.value : "";
  }

  function markErrors(view, lines) {
    const doc = view.state.doc;
    const diagnostics = lines
      .filter((e) => e.line >= 1 && e.line <= doc.lines)
      .map((e) => {
        const line = doc.line(e.line);
        return { from: line.from, to: line.to, severity: "error", message: e.message || "" };
      });
    view.dispatch(setDiagnostics(view.state, diagnostics));
  }

  function attach(textarea) {
    const form = textarea.form;
    const label = document.querySelector(`label[for="${textarea.id}"]`);
    const labelText = textarea.getAttribute("aria-label") || (label ? label.textContent.trim() : "");
    const readOnly = textarea.readOnly;
    const status = document.getElementById(textarea.dataset.saveStatus || "");
    const draftUrl = textarea.dataset.draftUrl;
    let saveTimer = null;
    let lastSaved = textarea.value;

    function say(text, isError) {
      if (!status) return;
      status.textContent = text;
      status.classList.toggle("error", isError);
    }

    function saveDraft() {
      const code = textarea.value;
      if (!draftUrl || code === lastSaved) return;
      const body = new URLSearchParams({ code });
      // keepalive lets a save still go out while the page is being left (submit, navigation),
      // but the browser refuses a keepalive body over 64 KiB with no reason given: a large
      // draft goes without it, so the server's own answer (the size limit) reaches the page.
      const keepalive = body.toString().length < 60000;
      fetch(draftUrl, { method: "POST", body, headers: { "X-CSRFToken": csrfToken() }, credentials: "same-origin", keepalive })
        .then((r) => r.json().then((data) => ({ ok: r.ok, data })))
        .then(({ ok, data }) => {
          if (ok) lastSaved = code;
          say(ok ? status.dataset.saved : data.error || status.dataset.failed, !ok);
        })
        .catch(() => say(status ? `${status.dataset.failed} ${status.dataset.offline || ""}`.trim() : "", true));
    }

    const submitKey = {
      key: "Mod-Enter",
      run: () => { if (form && !readOnly) form.requestSubmit(); return true; },
    };
    const view = new EditorView({
      parent: textarea.parentNode,
      state: EditorState.create({
        doc: textarea.value,
        // Our keys come before basicSetup: among equal precedences the earlier extension wins,
        // and basicSetup's default keymap binds Mod-Enter to "insert a blank line".
        extensions: [
          keymap.of([submitKey, indentWithTab]),
          basicSetup,
          syntaxHighlighting(readable),
          python(),
          indentUnit.of("    "),
          lintGutter(),
          EditorState.readOnly.of(readOnly),
          EditorView.contentAttributes.of({ "aria-label": labelText, "aria-describedby": textarea.getAttribute("aria-describedby") || "", tabindex: "0" }),
          EditorView.updateListener.of((update) => {
            if (!update.docChanged) return;
            textarea.value = update.state.doc.toString();
            if (draftUrl) {
              clearTimeout(saveTimer);
              saveTimer = setTimeout(saveDraft, 800);
            }
          }),
        ],
      }),
    });
    textarea.parentNode.insertBefore(view.dom, textarea.nextSibling);
    textarea.hidden = true;
    // A hidden field cannot show the browser's "fill this in" bubble, so `required` would
    // stop an empty submit without a word: the server says what is wrong instead.
    textarea.required = false;
    // Someone (a test, a password manager, the browser restoring a form) set the textarea:
    // the editor follows.
    textarea.addEventListener("input", () => {
      if (textarea.value !== view.state.doc.toString()) {
        view.dispatch({ changes: { from: 0, to: view.state.doc.length, insert: textarea.value } });
      }
    });
    if (label) label.addEventListener("click", () => view.focus());
    if (form) form.addEventListener("submit", () => { clearTimeout(saveTimer); textarea.value = view.state.doc.toString(); saveDraft(); });
    window.addEventListener("beforeunload", saveDraft);

    // Lines the verdict blames: given on the textarea, or in a JSON script the live verdict
    // brings (it may arrive after the page loaded).
    function markFromPage() {
      const source = document.getElementById(textarea.dataset.errorSource || "");
      const errors = source ? JSON.parse(source.textContent) : textarea.dataset.errorLines ? JSON.parse(textarea.dataset.errorLines) : [];
      if (errors.length) markErrors(view, errors);
    }
    markFromPage();
    document.body.addEventListener("htmx:afterSettle", markFromPage);

    const reset = document.querySelector(`[data-reset-for="${textarea.id}"]`);
    const starter = document.getElementById(textarea.dataset.starter || "");
    if (reset && starter) {
      reset.hidden = false;
      reset.addEventListener("click", () => {
        const code = JSON.parse(starter.textContent);
        view.dispatch({ changes: { from: 0, to: view.state.doc.length, insert: code } });
        markErrors(view, []);
        view.focus();
      });
    }
    textarea.editorView = view;
  }

  document.querySelectorAll("textarea[data-editor]").forEach(attach);
})();
