// Fulfilgate partner portal: copy buttons. The pages work without this
// script; it only shows the buttons and copies the value they name. When
// the browser refuses to write the clipboard, the value is selected
// instead, for the partner to copy with Ctrl+C (⌘C).
(function () {
  "use strict";
  // flash shows label (and the class "copied" when copied) on button for
  // ms, then its own label again.
  function flash(button, label, copied, ms) {
    var own = button.getAttribute("data-label") || button.textContent;
    button.setAttribute("data-label", own);
    clearTimeout(button.flashTimer);
    button.textContent = label;
    button.classList.toggle("copied", copied);
    button.flashTimer = setTimeout(function () {
      button.textContent = own;
      button.classList.remove("copied");
    }, ms);
  }
  function select(target) {
    var range = document.createRange();
    range.selectNodeContents(target);
    var selection = window.getSelection();
    selection.removeAllRanges();
    selection.addRange(range);
  }
  function copy(button) {
    var target = document.getElementById(button.getAttribute("data-copy"));
    if (!target || !navigator.clipboard) { return; }
    navigator.clipboard.writeText(target.textContent.trim()).then(function () {
      flash(button, "Copied", true, 2000);
    }, function () {
      select(target);
      flash(button, "Selected: press Ctrl+C", false, 6000);
    });
  }
  document.addEventListener("DOMContentLoaded", function () {
    var buttons = document.querySelectorAll("button[data-copy]");
    for (var i = 0; i < buttons.length; i++) {
      if (navigator.clipboard) { buttons[i].hidden = false; }
      buttons[i].addEventListener("click", function (e) { copy(e.currentTarget); });
    }
  });
})();
