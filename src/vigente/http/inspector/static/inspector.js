// vigente inspector: the timeline's (t, k) picker. Clicking a point of the chart fills the
// form with that valid date and knowledge date and shows the evidence there.
(function () {
  "use strict";
  function day(micros) {
    return new Date(Math.round(micros / 1000)).toISOString().slice(0, 10);
  }
  function numbers(text) {
    return text.split(",").map(Number);
  }
  // The instant at a pixel: linear between two stops of the axis (the server's scale).
  function invert(pixel, instants, pixels) {
    for (var i = 0; i + 1 < pixels.length; i++) {
      var a = pixels[i], b = pixels[i + 1];
      if ((pixel - a) * (pixel - b) <= 0) {
        return instants[i] + (pixel - a) / (b - a) * (instants[i + 1] - instants[i]);
      }
    }
    return null;
  }
  function at(svg, event) {
    var box = svg.getBoundingClientRect();
    var view = svg.viewBox.baseVal;
    var x = (event.clientX - box.left) * (view.width / box.width);
    var y = (event.clientY - box.top) * (view.height / box.height);
    var d = svg.dataset;
    var t = invert(x, numbers(d.validInstants), numbers(d.validPixels));
    var k = invert(y, numbers(d.knownInstants), numbers(d.knownPixels));
    if (t === null || k === null) return null;
    // nothing is known from the future: a point above today asks as known now (today)
    return { t: day(t), k: day(Math.min(k, Date.now() * 1000)) };
  }
  document.addEventListener("DOMContentLoaded", function () {
    var svg = document.getElementById("timeline");
    var form = document.getElementById("picker");
    if (!svg || !form) return;
    var pointer = document.getElementById("pointer");
    svg.addEventListener("mousemove", function (event) {
      var p = at(svg, event);
      if (pointer) pointer.textContent = p ? "t = " + p.t + ", k = " + p.k : "";
    });
    svg.addEventListener("click", function (event) {
      var p = at(svg, event);
      if (!p) return;
      document.getElementById("pick-t").value = p.t;
      document.getElementById("pick-k").value = p.k;
      form.submit();
    });
  });
})();
