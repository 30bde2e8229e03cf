() => {
  // Page script (builder.page_script runs it with the others): presenter keys in
  // presentation mode, and on a narrow screen the stream brought into view when Run is pressed.
  //
  // A clicker sends PageDown / PageUp; a keyboard has the arrows and Space as well. The keys press
  // the page's own buttons, so each does exactly what a click does (its events, its progress).
  //   PageDown, ArrowRight: Step, or Forward once the run has finished (the player holds it)
  //   PageUp, ArrowLeft:    Back
  //   Space:                Autoplay, or Pause while an autoplay is going
  // Only while presentation mode is on, and never while typing in a field.
  const TYPING =
    "textarea, select, [contenteditable]:not([contenteditable='false']), " +
    "input:not([type=checkbox]):not([type=radio]):not([type=button]):not([type=range])";
  const NARROW = "(max-width: 720px)"; // the phone layout's width (assets/specviz.css)
  const PLAYER = "#sv-run, #sv-step, #sv-stop, #sv-back, #sv-forward, #sv-autoplay, #sv-pause";

  // Whether the run on screen has finished (then the next key moves the player rather than
  // drafting more) and whether an autoplay is going: both follow the buttons pressed, by mouse
  // or by key. A finished run's status line says so until the player shows a cycle of it.
  let finished = false;
  let playing = false;
  let swallowSpace = false; // a handled Space must not also click the button that has focus
  const done = () => document.querySelector("#sv-status .sv-status-done") !== null;

  const press = (id) => {
    const button = document.getElementById(id);
    if (button === null || button.disabled) return false;
    button.click();
    return true;
  };

  // The autoplay ends by itself at the run's last cycle: Gradio's progress tracker on the status
  // line (the player's events show progress there only) is marked while its event is going.
  const autoplayGoing = () =>
    playing &&
    document.querySelector(
      '#sv-status [data-testid="status-tracker"]:is(.generating, .pending)',
    ) !== null;

  const showStream = (tries) => {
    // The Run click also brings the live tab forward: wait until the stream is drawn, then show
    // it with the status line above it (the run's progress).
    const stream = document.getElementById("sv-stream");
    const status = document.getElementById("sv-status");
    if (stream !== null && stream.offsetParent !== null) {
      const still = window.matchMedia("(prefers-reduced-motion: reduce)").matches;
      (status ?? stream).scrollIntoView({ behavior: still ? "auto" : "smooth", block: "start" });
    } else if (tries > 0) {
      requestAnimationFrame(() => showStream(tries - 1));
    }
  };

  document.addEventListener(
    "click",
    (event) => {
      const button = event.target instanceof Element ? event.target.closest(PLAYER) : null;
      if (button === null) return;
      if (button.id === "sv-run" || button.id === "sv-step") finished = false;
      else if (done()) finished = true;
      playing = button.id === "sv-autoplay";
      if (button.id === "sv-run" && window.matchMedia(NARROW).matches) showStream(120);
    },
    true,
  );

  document.addEventListener("keydown", (event) => {
    if (event.altKey || event.ctrlKey || event.metaKey || event.shiftKey) return;
    if (document.querySelector("#sv-page.sv-present") === null) return;
    const focus = event.target instanceof Element ? event.target : null;
    if (focus !== null && focus.closest(TYPING) !== null) return;
    if (done()) finished = true;
    let handled = false;
    if (event.key === "PageDown" || event.key === "ArrowRight") {
      handled = press(finished ? "sv-forward" : "sv-step");
    } else if (event.key === "PageUp" || event.key === "ArrowLeft") {
      handled = press("sv-back");
    } else if (event.key === " ") {
      handled = press(autoplayGoing() ? "sv-pause" : "sv-autoplay");
      swallowSpace = handled;
    }
    if (handled) event.preventDefault(); // no page scroll, no second action by the focused control
  });

  // A cycle's tree in presentation mode is a short strip that scrolls: each tree drawn there
  // opens on its kept path, from the root to the token the pass added, centred (a tall tree's
  // root is mid-height, under the strip's first lines, and its kept path may climb above it).
  // Measured on screen, as the tree's plot may be drawn zoomed.
  const KEPT = ["root", "accepted", "resampled", "bonus"]
    .map((verdict) => `.sv-tnode[data-verdict="${verdict}"]`)
    .join(", ");
  const centreRoots = () => {
    const strips = "#sv-page.sv-present #sv-cards .sv-tree-scroll:not([data-centred])";
    for (const strip of document.querySelectorAll(strips)) {
      const kept = [...strip.querySelectorAll(KEPT)].map((node) => node.getBoundingClientRect());
      if (kept.length === 0 || strip.clientHeight === 0) continue;
      strip.dataset.centred = "1";
      const top = Math.min(...kept.map((box) => box.top));
      const bottom = Math.max(...kept.map((box) => box.bottom));
      const offset = strip.getBoundingClientRect().top - strip.scrollTop;
      strip.scrollTop = (top + bottom) / 2 - offset - strip.clientHeight / 2;
    }
  };
  // Once a frame at most, however many changes a render makes: a strip's height is read there.
  let centring = 0;
  const centreSoon = () => {
    if (centring !== 0) return;
    centring = requestAnimationFrame(() => {
      centring = 0;
      centreRoots();
    });
  };
  new MutationObserver(centreSoon).observe(document.body, {
    childList: true,
    subtree: true,
    attributes: true,
    attributeFilter: ["class"],
  });

  document.addEventListener("keyup", (event) => {
    if (event.key === " " && swallowSpace) {
      swallowSpace = false;
      event.preventDefault(); // a focused button or checkbox acts on Space's keyup
    }
  });
}
