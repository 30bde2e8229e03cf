() => {
  // The guided first cycle: callouts over the live tab that walk one real cycle on the page (the
  // draft's guesses in the stream, the target's one pass over the cards, the die against a bar,
  // the first rejection and its resample, the bonus). Its words are the catalogue's, rendered
  // into a hidden element (specviz/views/guide_html.py) with their fields left as {name}; every
  // value filled in is read from the page when a callout opens and goes in as text, never markup.
  //
  // It opens by itself on a first visit (?guide=1 opens it, ?guide=0 keeps it shut) and by the
  // Guide button; once closed it is remembered in localStorage and not shown again unless asked.
  // It is a dialog that does not hold the page: the dimmed spotlight lets clicks through, so
  // Step can be pressed under it. Escape closes it; while it is open, Next and Back also answer
  // PageDown / → and PageUp / ← (a clicker), in presentation mode or with the focus in it.
  const WORDS = "#sv-guide-text .sv-guide-text";
  const CYCLE = "#sv-cards .sv-cards-wrap[data-cycle]";
  const TYPING =
    "textarea, select, [contenteditable]:not([contenteditable='false']), " +
    "input:not([type=checkbox]):not([type=radio]):not([type=button]):not([type=range])";
  const MARGIN = 8; // the callout keeps this far from the window's edges (px)
  const GAP = 14; // and this far from what it points at, its arrow in between

  const words = () => document.querySelector(WORDS);
  const clean = (el) => (el?.textContent ?? "").replace(/\s+/g, " ").trim();
  const line = (el) => (el?.innerText ?? "").split("\n")[0].trim(); // a card's numbers: its first line
  // A template with its fields filled, as nodes: a value is text, or a token as the card draws it
  // (a copy of the card's own nodes, which the page escaped: whitespace and pieces stay visible).
  const fill = (template, values) =>
    (template ?? "").split(/\{(\w+)\}/).map((part, at) => {
      if (at % 2 === 0 || !(part in values)) return document.createTextNode(at % 2 ? `{${part}}` : part);
      const value = values[part];
      return value instanceof Node ? value.cloneNode(true) : document.createTextNode(String(value));
    });
  const chip = (card) => {
    const shown = element("span", "sv-guide-tok");
    for (const node of card?.querySelector(".sv-card-tok")?.childNodes ?? []) {
      shown.append(node.cloneNode(true));
    }
    return shown;
  };

  const remembered = () => {
    try {
      return localStorage.getItem(words().dataset.seenKey) !== null;
    } catch {
      return false; // storage refused (a private window): the guide opens, as on a first visit
    }
  };
  const remember = () => {
    try {
      localStorage.setItem(words().dataset.seenKey, "1");
    } catch {
      // nothing kept: it may open again next time
    }
  };

  // The callouts for what the page shows now: an invitation to Step while no cycle is drawn,
  // else five over the cycle in the cards, each variant chosen by what that cycle holds.
  const callouts = () => {
    const wrap = document.querySelector(CYCLE);
    if (wrap === null) return [{ name: "intro", anchors: ["#sv-step"], values: {} }];
    const cycle = wrap.dataset.cycle;
    const row = wrap.querySelector(".sv-cards") ?? wrap;
    const drafts = [...wrap.querySelectorAll(".sv-card[data-pos]")];
    const card = (origin) => wrap.querySelector(`.sv-card[data-origin="${origin}"]`);
    const rejected = card("rejected");
    const resampled = card("resampled");
    const bonus = card("bonus");
    const rolled = drafts.find((draft) => draft.querySelector(".sv-bar") !== null);
    const judged = rolled ?? drafts.find((draft) => draft.dataset.origin !== "untested");
    const reason = (el) => clean(el?.querySelector(".sv-card-reason"));
    const tokens = clean(wrap.querySelector(".sv-cards-new"));
    const stretch = document.querySelector(`#sv-stream .sv-cycle[data-cycle="${cycle}"]`);
    // A tree cycle's guesses are its tree's (the cards follow the kept branch alone).
    const grown = wrap.querySelector(".sv-tree");
    const tree = Number(grown?.dataset.nodes ?? 0) > 0 ? grown : null;
    const count = (verdict) => tree.querySelectorAll(`.sv-tnode[data-verdict="${verdict}"]`).length;
    const list = [
      tree
        ? { name: "draft.tree", anchors: [tree], values: { cycle, nodes: tree.dataset.nodes } }
        : { name: "draft", anchors: [stretch ?? row], values: { cycle, drafted: drafts.length } },
      {
        name: tree ? "verify.tree" : "verify",
        anchors: [row],
        values: { first: line(drafts[0]?.querySelector(".sv-card-nums")) },
      },
    ];
    if (judged !== undefined) {
      const path = tree?.dataset.rule === "traversal"; // kept a whole branch at a time
      list.push({
        name: rolled ? (path ? "die.path" : "die") : "die.greedy",
        // The ring marks the bar and its tick; the callout stands beside the whole card, so
        // the card's token and verdict stay in sight.
        anchors: [rolled?.querySelector(".sv-bar") ?? judged],
        beside: [judged],
        values: { position: judged.dataset.pos, reason: reason(judged) },
      });
    }
    list.push(
      tree
        ? {
            name: "reject.tree",
            anchors: [tree],
            values: { rejected: count("rejected"), untested: count("untested") },
          }
        : rejected
        ? {
            name: "reject",
            anchors: [rejected, resampled ?? rejected],
            values: {
              position: rejected.dataset.pos,
              rejected: chip(rejected),
              resampled: chip(resampled),
              why: reason(resampled),
            },
          }
        : { name: "reject.none", anchors: [row], values: {} },
    );
    if (bonus) list.push({ name: "bonus", anchors: [bonus], values: { bonus: chip(bonus), tokens } });
    else if (resampled) list.push({ name: "bonus.none", anchors: [resampled], values: { tokens } });
    else list.push({ name: "bonus.end", anchors: [row], values: { tokens } });
    return list;
  };

  // The guide while it is open: which callout, its elements, and what it had focus from.
  let open = null;

  const element = (tag, className, attrs = {}) => {
    const el = document.createElement(tag);
    el.className = className;
    for (const [name, value] of Object.entries(attrs)) el.setAttribute(name, value);
    return el;
  };

  const build = () => {
    const text = words();
    const box = element("div", "sv-guide", {
      role: "dialog",
      "aria-modal": "false",
      // Named once for the whole walk; each callout's title and words describe it.
      "aria-describedby": "sv-guide-title sv-guide-body",
      lang: text.getAttribute("lang") ?? "en",
      "data-testid": "sv-guide",
    });
    box.setAttribute("aria-label", text.dataset.label);
    const arrow = element("div", "sv-guide-arrow", { "aria-hidden": "true" });
    const head = element("div", "sv-guide-head");
    const count = element("span", "sv-guide-count");
    const close = element("button", "sv-guide-close", { type: "button", "data-act": "close" });
    close.setAttribute("aria-label", text.dataset.close);
    close.textContent = "×";
    head.append(count, close);
    const title = element("h2", "sv-guide-title", { id: "sv-guide-title" });
    const body = element("p", "sv-guide-body", { id: "sv-guide-body" });
    const end = element("p", "sv-guide-end");
    const buttons = element("div", "sv-guide-buttons");
    const back = element("button", "sv-guide-back", { type: "button", "data-act": "back" });
    const next = element("button", "sv-guide-next", { type: "button", "data-act": "next" });
    buttons.append(back, next);
    box.append(arrow, head, title, body, end, buttons);
    const ring = element("div", "sv-guide-ring", { "aria-hidden": "true" });
    document.body.append(ring, box);
    box.addEventListener("click", (event) => {
      const act = event.target instanceof Element ? event.target.closest("[data-act]") : null;
      if (act !== null) act.dataset.act === "close" ? shut() : move(act.dataset.act);
    });
    return { box, ring, arrow, count, title, body, end, back, next };
  };

  // Draw callout number *index* of the list for the page as it is now.
  const draw = (scroll) => {
    const list = callouts();
    open.index = Math.max(0, Math.min(open.index, list.length - 1));
    const shown = list[open.index];
    const text = words();
    const callout = text.querySelector(`[data-callout="${shown.name}"]`);
    const { box, count, title, body, end, back, next } = open.parts;
    const intro = shown.name === "intro";
    const last = !intro && open.index === list.length - 1;
    box.dataset.callout = shown.name;
    const counter = { step: open.index + 1, total: list.length };
    count.replaceChildren(...(intro ? [] : fill(text.dataset.counter, counter)));
    title.replaceChildren(...fill(callout.dataset.title, shown.values));
    const said = open.waiting && intro ? text.dataset.waiting : callout.dataset.body;
    body.replaceChildren(...fill(said, shown.values));
    end.textContent = last ? text.dataset.end : "";
    end.hidden = !last;
    back.textContent = text.dataset.back;
    back.hidden = intro;
    back.disabled = open.index === 0;
    next.textContent = intro ? text.dataset.stepForMe : last ? text.dataset.done : text.dataset.next;
    next.disabled = intro && open.waiting;
    open.anchors = shown.anchors;
    open.beside = shown.beside ?? shown.anchors;
    place(scroll);
  };

  // Where *anchors* (elements or selectors) are, as one box in the window (the page's
  // coordinates move with every scroll, so this is asked again each time).
  const anchorBox = (anchors) => {
    const found = anchors
      .map((anchor) => (typeof anchor === "string" ? document.querySelector(anchor) : anchor))
      .filter((el) => el !== null && el.isConnected && el.getClientRects().length > 0);
    if (found.length === 0) return null;
    const boxes = found.map((el) => el.getBoundingClientRect());
    const top = Math.min(...boxes.map((b) => b.top));
    const left = Math.min(...boxes.map((b) => b.left));
    const bottom = Math.max(...boxes.map((b) => b.bottom));
    const right = Math.max(...boxes.map((b) => b.right));
    return { top, left, bottom, right, width: right - left, height: bottom - top };
  };

  // The callout beside its element: below it if it fits, else above, else to the right or left,
  // else over the window's bottom edge; the ring goes round what it marks and the arrow points
  // at that. *scroll*: bring the element (and the callout with it, when both fit) into the
  // window first.
  const place = (scroll) => {
    const { box, ring, arrow } = open.parts;
    const view = { width: window.innerWidth, height: window.innerHeight };
    const tall = box.offsetHeight;
    const wide = box.offsetWidth;
    let target = anchorBox(open.beside);
    if (target !== null && scroll) {
      const both = target.height + GAP + tall;
      const roomy = both <= view.height - 2 * MARGIN;
      const seen = target.top >= MARGIN && target.bottom <= view.height - MARGIN;
      const fits =
        target.bottom + GAP + tall <= view.height - MARGIN || target.top - GAP - tall >= MARGIN;
      if (!seen || !fits) {
        const wanted = roomy ? (view.height - both) / 2 : MARGIN;
        window.scrollBy({ top: target.top - wanted, behavior: "instant" });
        target = anchorBox(open.beside) ?? target;
      }
    }
    const inView = (b) => b.bottom > 0 && b.top < view.height && b.right > 0 && b.left < view.width;
    if (target === null || !inView(target)) {
      // Nothing on screen to point at (the page not yet scrolled to it): the callout waits at
      // the bottom of the window.
      ring.hidden = true;
      arrow.hidden = true;
      box.dataset.side = "over";
      box.style.left = `${Math.round(Math.max(MARGIN, (view.width - wide) / 2))}px`;
      box.style.top = `${Math.round(Math.max(MARGIN, view.height - tall - MARGIN))}px`;
      return;
    }
    const centred = (start, size, room, length) =>
      Math.max(MARGIN, Math.min(start + size / 2 - length / 2, room - length - MARGIN));
    let side;
    let left;
    let top;
    if (target.bottom + GAP + tall <= view.height - MARGIN) {
      side = "below";
      top = target.bottom + GAP;
    } else if (target.top - GAP - tall >= MARGIN) {
      side = "above";
      top = target.top - GAP - tall;
    } else if (target.right + GAP + wide <= view.width - MARGIN) {
      side = "right";
      left = target.right + GAP;
    } else if (target.left - GAP - wide >= MARGIN) {
      side = "left";
      left = target.left - GAP - wide;
    } else {
      side = "over";
      top = view.height - tall - MARGIN;
    }
    if (side === "below" || side === "above" || side === "over") {
      left = centred(target.left, target.width, view.width, wide);
    } else {
      top = centred(target.top, target.height, view.height, tall);
    }
    box.style.left = `${Math.round(left)}px`;
    box.style.top = `${Math.round(top)}px`;
    box.dataset.side = side;
    const marked = anchorBox(open.anchors) ?? target;
    arrow.hidden = side === "over";
    if (side === "below" || side === "above") {
      const x = Math.max(16, Math.min(marked.left + marked.width / 2 - left, wide - 16));
      arrow.style.left = `${x}px`;
      arrow.style.top = "";
    } else {
      const y = Math.max(16, Math.min(marked.top + marked.height / 2 - top, tall - 16));
      arrow.style.top = `${y}px`;
      arrow.style.left = "";
    }
    const pad = 6;
    ring.hidden = false;
    ring.style.left = `${Math.round(marked.left - pad)}px`;
    ring.style.top = `${Math.round(marked.top - pad)}px`;
    ring.style.width = `${Math.round(marked.width + 2 * pad)}px`;
    ring.style.height = `${Math.round(marked.height + 2 * pad)}px`;
  };

  // Open at the first callout. *scroll*: bring its element into view (not when the page opens by
  // itself: its layout is still settling, and the first callout points at Step, on screen).
  const show = (scroll) => {
    if (words() === null) return;
    if (open === null) {
      const from = document.activeElement;
      open = { index: 0, waiting: false, parts: build(), from, anchors: [], beside: [] };
      follow();
    }
    open.index = 0;
    draw(scroll);
    open.parts.next.focus({ preventScroll: true });
  };

  // The page moves under the callout as it draws (styles, charts, a new cycle, presentation
  // mode): each frame while the guide is open, it is placed again if its element moved.
  const follow = () => {
    let last = "";
    const frame = () => {
      if (open === null) return;
      const box = anchorBox(open.anchors);
      const near = anchorBox(open.beside);
      const callout = open.parts.box;
      const now = [
        box === null ? "" : [box.top, box.left, box.width, box.height].join(),
        near === null ? "" : [near.top, near.left, near.width, near.height].join(),
        callout.offsetWidth,
        callout.offsetHeight,
        window.innerWidth,
        window.innerHeight,
      ].join();
      if (now !== last) {
        last = now;
        place(false);
      }
      requestAnimationFrame(frame);
    };
    requestAnimationFrame(frame);
  };

  const shut = () => {
    if (open === null) return;
    const { box, ring } = open.parts;
    const from = open.from;
    box.remove();
    ring.remove();
    open = null;
    remember();
    if (from instanceof HTMLElement && from.isConnected) from.focus({ preventScroll: true });
  };

  const move = (act) => {
    if (open === null) return;
    const intro = open.parts.box.dataset.callout === "intro";
    if (act === "next" && intro) {
      // Step for me: the page's own Step button, so the cycle is the one any Step would draw.
      const step = document.getElementById("sv-step");
      if (step !== null && !step.disabled) {
        step.click();
        open.waiting = true;
        draw(false);
      }
      return;
    }
    const total = callouts().length;
    if (act === "next" && open.index >= total - 1) {
      shut();
      return;
    }
    open.index += act === "next" ? 1 : -1;
    draw(true);
  };

  // The page changed under the guide (a cycle drawn, a Step pressed): the callouts are read again.
  let redraw = 0;
  const changed = () => {
    if (open === null || redraw !== 0) return;
    redraw = requestAnimationFrame(() => {
      redraw = 0;
      if (open === null) return;
      const cycle = document.querySelector(CYCLE);
      if (open.waiting && document.querySelector("#sv-status .sv-status-error") !== null) {
        open.waiting = false; // the Step failed (its words are on the status line): try again
        draw(false);
      } else if (open.parts.box.dataset.callout === "intro" && cycle !== null) {
        open.waiting = false; // a cycle has come (Step for me, or Step): its walk begins
        open.index = 0;
        draw(true);
        open.parts.next.focus({ preventScroll: true });
      } else {
        draw(false);
      }
    });
  };
  let started = false;
  const start = () => {
    if (started || words() === null || document.getElementById("sv-step") === null) return;
    started = true;
    const asked = new URLSearchParams(window.location.search).get("guide");
    if (asked === "1" || (asked !== "0" && !remembered())) show(false);
    // The page has decided whether the guide opens by itself: what a test waits on before it
    // checks that nothing opened.
    document.documentElement.dataset.svGuide = "ready";
  };

  new MutationObserver((records) => {
    start();
    if (open === null) return;
    // Only changes to the app's views count: the guide's own moves would redraw it for ever.
    if (records.some((record) => !open.parts.box.contains(record.target) && record.target !== open.parts.ring)) {
      changed();
    }
  }).observe(document.body, { childList: true, subtree: true, characterData: true });
  start();

  document.addEventListener("click", (event) => {
    const button = event.target instanceof Element ? event.target.closest("#sv-guide-open") : null;
    if (button !== null) show(true);
  });

  // Window, capture phase: ahead of presentation mode's keys (assets/presenter.js), which would
  // otherwise also Step on the same PageDown.
  window.addEventListener(
    "keydown",
    (event) => {
      if (open === null || event.altKey || event.ctrlKey || event.metaKey) return;
      if (event.key === "Escape") {
        shut();
        event.preventDefault();
        return;
      }
      const focus = event.target instanceof Element ? event.target : null;
      const inside = focus !== null && open.parts.box.contains(focus);
      const presenting = document.querySelector("#sv-page.sv-present") !== null;
      if (!inside && (!presenting || (focus !== null && focus.closest(TYPING) !== null))) return;
      let act = null;
      if (event.key === "PageDown" || event.key === "ArrowRight") act = "next";
      else if (event.key === "PageUp" || event.key === "ArrowLeft") act = "back";
      if (act === null || event.shiftKey) return;
      if (act === "back" && open.parts.back.disabled) return;
      move(act);
      event.preventDefault();
      event.stopImmediatePropagation();
    },
    true,
  );
};
