() => {
  // Page script (builder.page_script runs it after presenter.js): the live tab's views linked,
  // in the browser, with no server round trip for a hover.
  //
  // Hovering or focusing a token of the stream (or a cycle's mark) lights what it stands for in
  // the per-run charts. Each trace that takes part names in its meta what its points' customdata
  // holds (views/run_charts.py, LINK_*):
  //   cycle     the token's cycle: the time split's bars, the cumulative tokens' points
  //   position  a tested draft's position: the acceptance-by-position bars
  //   accepted  how many drafts the token's cycle kept: the accepted-length histogram
  // The points lit are Plotly's selected points (it dims the others); the token's card is outlined
  // when its cycle is the one the cards show. Leaving the token lights nothing again (or the
  // focused token, if one is). Gradio draws a chart anew for each update (a new element), and
  // rewrites the cards' classes as it patches them: both are lit again from what is lit now.
  //
  // A click on a chart's point that carries a cycle moves the player there: the stream's own
  // script sends it as a click on the stream (live_tab.STREAM_JS), the server event a click on a
  // token sends, whose frame is the one Back and Forward show. Hovering such a point marks its
  // cycle in the stream, so the reader sees where the click will go, and the pointer turns to a
  // hand over it.
  const STREAM = "#sv-stream";
  const CHARTS = "#sv-tab-live .js-plotly-plot";
  const LINKABLE = ".sv-cycle[data-cycle] :is(.sv-tok, .sv-cut)";
  const TESTED = ["accepted", "rejected"]; // the drafts the acceptance-by-position bars count

  let lit = null; // what is lit now: {cycle, accepted, position, origin, pos} as strings, or null

  const linkable = (target) => {
    const item = target instanceof Element ? target.closest(LINKABLE) : null;
    return item !== null && item.closest(STREAM) !== null ? item : null;
  };

  const keysOf = (item) => {
    if (item === null) return null;
    const cycle = item.closest(".sv-cycle");
    const token = item.matches(".sv-tok");
    return {
      cycle: cycle.dataset.cycle,
      accepted: cycle.dataset.accepted,
      position: token && TESTED.includes(item.dataset.origin) ? item.dataset.pos : undefined,
      origin: token ? item.dataset.origin : undefined,
      pos: token ? item.dataset.pos : undefined,
    };
  };

  // Each linked trace's points whose customdata is the value lit for its link (null: none).
  const lightChart = (chart) => {
    if (window.Plotly === undefined || !Array.isArray(chart.data)) return;
    const traces = [];
    const chosen = [];
    chart.data.forEach((trace, index) => {
      const link = trace.meta?.link;
      if (typeof link !== "string") return;
      const value = lit?.[link];
      const points = [];
      if (value !== undefined) {
        Array.from(trace.customdata ?? []).forEach((data, point) => {
          if (data !== null && String(data) === value) points.push(point);
        });
      }
      traces.push(index);
      chosen.push(points.length > 0 ? points : null); // no match: nothing dimmed
    });
    if (traces.length > 0) window.Plotly.restyle(chart, { selectedpoints: chosen }, traces);
  };

  // Touches a card's class only where it changes, so it can follow every patch of the cards.
  const lightCard = () => {
    let card = null;
    if (lit?.pos !== undefined && lit.origin !== undefined) {
      const wrap = document.querySelector(
        `#sv-cards .sv-cards-wrap[data-cycle="${CSS.escape(lit.cycle)}"]`,
      );
      card = wrap?.querySelector(
        `.sv-card[data-origin="${CSS.escape(lit.origin)}"][data-pos="${CSS.escape(lit.pos)}"]`,
      );
    }
    for (const other of document.querySelectorAll("#sv-cards .sv-card.sv-linked")) {
      if (other !== card) other.classList.remove("sv-linked");
    }
    if (card && !card.classList.contains("sv-linked")) card.classList.add("sv-linked");
  };

  // The cycle a chart's point under the pointer belongs to, marked in the stream (null: none).
  const markCycle = (cycle) => {
    for (const item of document.querySelectorAll(`${STREAM} .sv-cycle[data-cycle]`)) {
      const on = item.dataset.cycle === cycle;
      if (item.classList.contains("sv-linked") !== on) item.classList.toggle("sv-linked", on);
    }
  };

  const cycleOf = (event) => {
    const point = event?.points?.find(
      (one) => one.data?.meta?.link === "cycle" && Number(one.customdata) >= 1,
    );
    return point === undefined ? null : String(point.customdata);
  };

  const showCycle = (event) => {
    const cycle = cycleOf(event);
    const stream = document.querySelector(`${STREAM} .sv-stream`);
    if (cycle === null || stream === null) return;
    stream.dispatchEvent(
      new CustomEvent("sv-show-cycle", { bubbles: true, detail: { cycle: Number(cycle) } }),
    );
  };

  // Plotly's listeners on a chart, added once per chart drawing: Plotly forgets them when it
  // purges a chart, so each is taken off and put back, never doubled.
  const listeners = new WeakMap();
  const listen = (chart) => {
    if (typeof chart.on !== "function" || typeof chart.removeListener !== "function") return;
    let own = listeners.get(chart);
    if (own === undefined) {
      own = {
        plotly_click: showCycle,
        plotly_hover: (event) => {
          const cycle = cycleOf(event);
          markCycle(cycle);
          chart.classList.toggle("sv-goes-to-cycle", cycle !== null);
        },
        plotly_unhover: () => {
          markCycle(null);
          chart.classList.remove("sv-goes-to-cycle");
        },
        plotly_react: () => {
          if (lit !== null) lightChart(chart);
        },
      };
      listeners.set(chart, own);
    }
    for (const [name, handler] of Object.entries(own)) {
      chart.removeListener(name, handler);
      chart.on(name, handler);
    }
  };

  const light = (keys) => {
    if (JSON.stringify(keys) === JSON.stringify(lit)) return;
    lit = keys;
    for (const chart of document.querySelectorAll(CHARTS)) {
      listen(chart);
      lightChart(chart);
    }
    lightCard();
  };

  // Leaving a token for something that is not one: the focused token is lit, if there is one.
  const unlight = (into) => {
    if (linkable(into) === null) light(keysOf(linkable(document.activeElement)));
  };

  document.addEventListener("mouseover", (event) => {
    const item = linkable(event.target);
    if (item !== null) light(keysOf(item));
  });
  document.addEventListener("mouseout", (event) => {
    if (linkable(event.target) !== null) unlight(event.relatedTarget);
  });
  document.addEventListener("focusin", (event) => {
    const item = linkable(event.target);
    if (item !== null) light(keysOf(item));
  });
  document.addEventListener("focusout", (event) => {
    if (linkable(event.target) !== null && linkable(event.relatedTarget) === null) light(null);
  });
  // A chart drawn anew (Gradio replaces the element on each update) is listened to and lit once
  // Plotly has set it up (its on()); the pointer entering a chart makes sure of it before a click.
  const known = new WeakSet();
  const meet = (chart) => {
    if (known.has(chart) || typeof chart.on !== "function") return;
    known.add(chart);
    listen(chart);
    if (lit !== null) lightChart(chart);
  };
  const inCards = (record) => {
    const where = record.target instanceof Element ? record.target : record.target.parentElement;
    return where?.closest("#sv-cards") != null;
  };
  new MutationObserver((records) => {
    if (records.some((record) => record.addedNodes.length > 0)) {
      document.querySelectorAll(CHARTS).forEach(meet);
    }
    if (lit !== null && records.some(inCards)) lightCard();
  }).observe(document.body, { childList: true, subtree: true, characterData: true });
  document.addEventListener("pointerover", (event) => {
    const chart = event.target instanceof Element ? event.target.closest(CHARTS) : null;
    if (chart !== null) listen(chart);
  });
}
