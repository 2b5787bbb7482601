// Fulfilgate partner portal: copy buttons. The pages work without this
// script; it only shows the buttons and copies the value they name.
(function () {
  "use strict";
  function copy(button) {
    var target = document.getElementById(button.getAttribute("data-copy"));
    if (!target || !navigator.clipboard) { return; }
    navigator.clipboard.writeText(target.textContent.trim()).then(function () {
      var label = button.textContent;
      button.textContent = "Copied";
      button.classList.add("copied");
      setTimeout(function () { button.textContent = label; button.classList.remove("copied"); }, 2000);
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
