// The assignment item picker: one list of exercises, quizzes and mock interviews, grouped by
// kind, narrowed as the instructor types. Without JavaScript the grouped list still works.
(function () {
  "use strict";
  const fold = (text) => text.normalize("NFKC").toLocaleLowerCase();
  document.querySelectorAll("[data-item-picker]").forEach((picker) => {
    const search = picker.querySelector("input[type=search]");
    const list = picker.querySelector("select");
    const noMatch = picker.querySelector("[data-no-match]");
    const options = [...list.querySelectorAll("option")].map((option) => ({
      option,
      // The value names the kind and the slug, so "quiz" or a slug finds it too.
      text: fold(`${option.textContent} ${option.value} ${option.parentElement.label || ""}`),
    }));
    function narrow() {
      const words = fold(search.value).split(/\s+/).filter(Boolean);
      let shown = 0;
      for (const { option, text } of options) {
        const match = words.every((word) => text.includes(word));
        // Disabled as well as hidden: a hidden option can still be reached by the keyboard.
        option.hidden = option.disabled = !match;
        if (!match) option.selected = false;
        shown += match;
      }
      list.querySelectorAll("optgroup").forEach((group) => {
        group.hidden = !group.querySelector("option:not([hidden])");
      });
      noMatch.hidden = shown > 0;
    }
    search.hidden = false;
    search.addEventListener("input", narrow);
    search.addEventListener("keydown", (event) => {
      if (event.key !== "Enter" && event.key !== "ArrowDown") return;
      // Enter picks the first match instead of sending the form half filled.
      event.preventDefault();
      const first = options.find(({ option }) => !option.hidden);
      if (first) {
        first.option.selected = true;
        list.focus();
      }
    });
  });
})();
