// Frame a vis-network picture around its focus node(s): once the layout settles (or at once
// when every node has its place), and again whenever the frame changes size, every node is
// inside the frame and the focus is in the middle. `done` is called after each framing.
function ctxframeFocus(net, centre, done) {
  function frame() {
    var box = net.body.container;
    var w = box.clientWidth, h = box.clientHeight;
    if (w < 20 || h < 20) return;  // not laid out yet (a hidden tab); the resize comes later
    var pos = net.getPositions();
    var ids = Object.keys(pos);
    if (!ids.length) return;
    var focus = centre.filter(function (id) { return pos[id]; });
    if (!focus.length) focus = ids;
    var cx = 0, cy = 0;
    focus.forEach(function (id) { cx += pos[id].x; cy += pos[id].y; });
    cx /= focus.length; cy /= focus.length;
    var dx = 1, dy = 1;
    ids.forEach(function (id) {
      var b = net.getBoundingBox(id);
      if (!b) return;
      dx = Math.max(dx, Math.abs(b.left - cx), Math.abs(b.right - cx));
      dy = Math.max(dy, Math.abs(b.top - cy), Math.abs(b.bottom - cy));
    });
    var scale = Math.min((w / 2 - 12) / dx, (h / 2 - 12) / dy, 1.25);
    net.moveTo({ position: { x: cx, y: cy }, scale: scale });
    box.setAttribute("data-framed", "1");
    if (done) done();
  }
  if (net.physics.options.enabled === false) {
    net.once("afterDrawing", function () { setTimeout(frame, 0); });
  } else {
    net.once("stabilizationIterationsDone", function () {
      net.setOptions({ physics: false });
      frame();
    });
  }
  net.on("resize", function () { setTimeout(frame, 0); });
  if (window.ResizeObserver) {  // shown after being hidden (a tab, a scrolled-away cell)
    var watch = new ResizeObserver(function () {
      if (!net.canvas || !net.body) { watch.disconnect(); return; }  // destroyed meanwhile
      net.canvas.setSize();
      frame();
    });
    watch.observe(net.body.container);
  }
  net.ctxframeFrame = frame;
  return frame;
}
