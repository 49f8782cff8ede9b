// ad-diff HTML report: the filter box, and opening the fold that holds a linked row. No network, no eval;
// text is only read (textContent/dataset), never written as HTML.
(function () {
  "use strict";
  var input = document.getElementById("filter");
  var count = document.getElementById("filter-count");
  var items = Array.prototype.slice.call(document.querySelectorAll("[data-filter]"));

  function openAncestors(el) {
    for (var p = el.parentElement; p; p = p.parentElement) {
      if (p.tagName === "DETAILS") { p.open = true; }
    }
  }

  function apply() {
    var words = input.value.toLowerCase().split(/\s+/).filter(Boolean);
    var shown = 0;
    items.forEach(function (el) {
      var text = el.getAttribute("data-filter") || "";
      var ok = words.every(function (w) { return text.indexOf(w) !== -1; });
      el.hidden = !ok;
      if (ok) {
        shown += 1;
        if (words.length) { openAncestors(el); }
      }
    });
    count.textContent = words.length ? shown + " of " + items.length + " match" : "";
  }

  function reveal() {
    var id = decodeURIComponent(location.hash.slice(1));
    var el = id && document.getElementById(id);
    if (el) { openAncestors(el); if (el.tagName === "DETAILS") { el.open = true; } el.scrollIntoView(); }
  }

  input.addEventListener("input", apply);
  window.addEventListener("hashchange", reveal);
  reveal();
}());
