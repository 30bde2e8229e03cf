() => {
  // The animated cycle: with Animate ticked, each new cycle drawn in the cards plays as motion
  // (the .sv-animate rules in assets/specviz.css): the drafts appear one by one, one verify
  // sweep crosses them, the die (the u tick) lands on each bar as the verdicts come, the
  // rejected tail fades and the resample or bonus drops in. It lasts most of one frame at the
  // autoplay pace (#sv-pace, cycles per second), so it has ended before the next frame comes,
  // whatever drew the cycle: Step, Back, Forward, Autoplay or a run. Nothing moves when the
  // system asks for reduced motion.
  const CYCLE = "#sv-cards .sv-cards-wrap[data-cycle]";
  const SHARE = 0.85; // of one frame at the pace
  const STILL = "(prefers-reduced-motion: reduce)";

  // The pace as the dropdown words it ("1.5 cycles/s", "毎秒 1.5 サイクル"): its one number.
  const pace = () => {
    const words = document.querySelector("#sv-pace input")?.value ?? "";
    const number = parseFloat((words.match(/\d+(?:\.\d+)?/) ?? ["1"])[0]);
    return number > 0 ? number : 1;
  };
  const wanted = () =>
    document.querySelector("#sv-animate-toggle input")?.checked === true &&
    !window.matchMedia(STILL).matches;

  let ending = 0;
  const play = (wrap) => {
    const total = Math.round((SHARE * 1000) / pace());
    const drafts = [...wrap.querySelectorAll(".sv-card[data-pos]")];
    // Gradio redraws the cards in place (the same elements, new classes and text), so the
    // motion is restarted by hand: off, a style recalculation, on again.
    wrap.classList.remove("sv-animate", "sv-animated");
    void wrap.offsetWidth;
    wrap.style.setProperty("--sv-total", `${total}ms`);
    wrap.style.setProperty("--sv-drafts", String(Math.max(1, drafts.length)));
    // The sweep crosses the drafts only: up to the right edge of the last one.
    const row = wrap.querySelector(".sv-cards");
    const start = (row ?? wrap).getBoundingClientRect().left;
    const edge = Math.max(start, ...drafts.map((card) => card.getBoundingClientRect().right));
    wrap.style.setProperty("--sv-span", `${Math.round(edge - start)}px`);
    wrap.classList.add("sv-animate");
    clearTimeout(ending);
    // Ended, the cards keep their last frame and no animation of their own: the next redraw
    // resets the classes anyway.
    ending = setTimeout(() => wrap.classList.replace("sv-animate", "sv-animated"), total);
  };

  // The cycle last drawn, by its number and text: a new one differs (a new run's cycle 1 too),
  // and the classes set here change neither.
  let shown = "";
  const check = () => {
    const wrap = document.querySelector(CYCLE);
    const now = wrap === null ? "" : `${wrap.dataset.cycle}\n${wrap.textContent}`;
    if (now === shown) return;
    shown = now;
    if (wrap !== null && wanted()) play(wrap);
  };
  new MutationObserver(check).observe(document.body, {
    childList: true,
    subtree: true,
    characterData: true,
    attributes: true,
    attributeFilter: ["data-cycle"],
  });
};
