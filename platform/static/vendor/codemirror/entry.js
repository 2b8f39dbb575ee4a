// What GraphDojo's editor uses from CodeMirror 6, bundled into one file (see README.md).
export { EditorView, basicSetup } from "codemirror";
export { python } from "@codemirror/lang-python";
export { keymap } from "@codemirror/view";
export { EditorState } from "@codemirror/state";
export { indentWithTab } from "@codemirror/commands";
export { setDiagnostics, lintGutter } from "@codemirror/lint";
export { HighlightStyle, indentUnit, syntaxHighlighting } from "@codemirror/language";
export { tags } from "@lezer/highlight";
