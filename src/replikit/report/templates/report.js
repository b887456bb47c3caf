// Sortable tables and print preparation; inline, no external resource.
(function () {
  "use strict";
  function cellValue(row, i) {
    var text = row.cells[i] ? row.cells[i].textContent.trim() : "";
    var num = parseFloat(text.replace(/,/g, "").replace("\u2212", "-"));
    return isNaN(num) || !/^[-\u2212+]?[\d.,]+(e[-+]?\d+)?%?$/i.test(text) ? text.toLowerCase() : num;
  }
  document.querySelectorAll("table.sortable").forEach(function (table) {
    table.querySelectorAll("thead th").forEach(function (th, i) {
      th.addEventListener("click", function () {
        var body = table.tBodies[0];
        var rows = Array.prototype.slice.call(body.rows);
        var dir = th.getAttribute("aria-sort") === "ascending" ? -1 : 1;
        rows.sort(function (a, b) {
          var x = cellValue(a, i), y = cellValue(b, i);
          if (typeof x === typeof y) { return (x < y ? -1 : x > y ? 1 : 0) * dir; }
          return (typeof x === "number" ? -1 : 1) * dir;
        });
        table.querySelectorAll("thead th").forEach(function (h) { h.removeAttribute("aria-sort"); });
        th.setAttribute("aria-sort", dir === 1 ? "ascending" : "descending");
        rows.forEach(function (r) { body.appendChild(r); });
      });
    });
  });
  window.addEventListener("beforeprint", function () {
    document.querySelectorAll("details").forEach(function (d) { d.setAttribute("open", ""); });
  });
})();
