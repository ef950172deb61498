// The overview's styles: a flow of stage cards joined by arrows, left to right on a wide
// panel and top to bottom on a narrow one (a container query on the element's own width).

import { css } from 'lit';

export const overviewStyles = css`
  :host {
    container-type: inline-size;
  }
  .card {
    padding: 12px 14px 10px;
  }
  header {
    display: flex;
    flex-wrap: wrap;
    align-items: baseline;
    gap: 4px 12px;
    margin-bottom: 10px;
  }
  header h2 {
    margin: 0;
    font-size: 1.1rem;
  }
  header .sub {
    color: var(--tp-muted);
    font-size: 0.85rem;
  }
  .text-box {
    display: flex;
    align-items: center;
    gap: 8px;
    margin: 0 0 10px;
    font-size: 0.85rem;
    color: var(--tp-muted);
  }
  .text-box input {
    flex: 1 1 auto;
    min-width: 0;
    max-width: 40em;
    font: inherit;
    font-size: 1rem;
    color: var(--tp-fg);
    padding: 4px 8px;
  }
  .rows {
    display: flex;
    flex-direction: column;
    gap: 10px;
  }
  .flow {
    display: flex;
    align-items: stretch;
    gap: 0;
    min-width: 0;
  }
  .arrow {
    flex: 0 0 18px;
    align-self: center;
    text-align: center;
    color: var(--tp-muted);
    font-size: 15px;
    line-height: 1;
    user-select: none;
  }
  .arrow::before {
    content: '→';
  }
  .stage {
    flex: 0 1 auto;
    display: flex;
    flex-direction: column;
    align-items: stretch;
    gap: 5px;
    min-width: 0;
    text-align: left;
    padding: 7px 8px 8px;
    border: 1px solid var(--tp-line);
    border-radius: 9px;
    background: var(--tp-bg);
    cursor: pointer;
    transition: border-color 0.15s, box-shadow 0.15s;
  }
  .stage:hover {
    border-color: var(--tp-accent);
    box-shadow: 0 1px 6px rgba(47, 91, 211, 0.18);
  }
  .stage:focus-visible {
    outline: 2px solid var(--tp-focus);
    outline-offset: 2px;
  }
  .stage .t {
    font-weight: 600;
    font-size: 0.8rem;
    line-height: 1.2;
  }
  .stage .c {
    color: var(--tp-muted);
    font-size: 0.72rem;
    line-height: 1.3;
  }
  .stage .pic {
    display: block;
    margin: auto 0;
    padding: 4px 0;
  }
  .stage .c {
    order: 3;
  }
  .stage.io {
    background: var(--tp-io-fill);
    width: 128px;
  }
  .stage.attn {
    background: var(--tp-attn-fill);
    width: 150px;
    --ov-head: 58px;
  }
  .stage.ffn {
    background: var(--tp-ffn-fill);
    width: 128px;
  }
  .stage.out {
    background: var(--tp-io-fill);
    width: 190px;
  }
  .stage.next {
    width: 120px;
  }
  /* Norms and adds: slim upright pills between the sublayers. */
  .stage.pill {
    width: 30px;
    padding: 6px 2px;
    align-items: center;
    justify-content: center;
    border-style: dashed;
    background: var(--tp-bg);
  }
  .stage.pill .t {
    writing-mode: vertical-rl;
    transform: rotate(180deg);
    font-size: 0.74rem;
    white-space: nowrap;
  }
  /* Chinese stands upright in a vertical line. */
  .stage.pill .t:lang(zh) {
    transform: none;
  }
  .stage.pill.add .t {
    writing-mode: horizontal-tb;
    transform: none;
    font-size: 1.1rem;
    color: var(--tp-accent);
  }
  .stage.pill.add {
    border-color: var(--tp-accent);
    border-style: solid;
    border-radius: 15px;
    align-self: center;
    height: 30px;
  }
  .stage.memory {
    width: 116px;
    border-style: dashed;
  }
  /* A stack: its name, the layer drawn in full, and every layer as a row of small chips. */
  .stack {
    flex: 0 1 auto;
    display: flex;
    flex-direction: column;
    gap: 6px;
    padding: 6px 8px 8px;
    border: 1.5px solid var(--tp-line);
    border-radius: 12px;
    background: var(--tp-page);
    min-width: 0;
  }
  .stack-head {
    display: flex;
    justify-content: space-between;
    align-items: center;
    gap: 8px;
  }
  .stack-head button.name {
    border: 0;
    background: none;
    padding: 0;
    font-weight: 600;
    font-size: 0.82rem;
    color: var(--tp-fg);
  }
  .stack-head button.name:hover {
    color: var(--tp-accent);
    text-decoration: underline;
  }
  .block {
    display: flex;
    align-items: stretch;
    gap: 0;
  }
  .block .arrow {
    flex-basis: 12px;
    font-size: 12px;
  }
  /* The residual path: an arc over each sublayer from its input to its add. */
  .unit {
    display: flex;
    align-items: stretch;
    position: relative;
    padding-top: 12px;
  }
  .unit.res::before {
    content: '';
    position: absolute;
    top: 3px;
    left: 4px;
    right: 14px;
    height: 12px;
    border: 1.5px solid var(--tp-accent);
    border-bottom: 0;
    border-radius: 8px 8px 0 0;
    pointer-events: none;
  }
  .layers {
    display: flex;
    flex-wrap: wrap;
    gap: 4px;
    align-items: center;
    font-size: 0.72rem;
    color: var(--tp-muted);
  }
  .layers button .strip {
    height: 8px;
  }
  .layers button {
    display: flex;
    flex-direction: column;
    gap: 2px;
    padding: 2px 6px 3px;
    font-size: 0.72rem;
    min-width: 64px;
  }
  .strip {
    display: flex;
    height: 14px;
    border-radius: 2px;
    overflow: hidden;
    min-width: 40px;
  }
  .strip > span {
    flex: 1 1 0;
    min-width: 1px;
  }
  .strip > span.new {
    outline: 2px solid var(--tp-focus);
    outline-offset: -2px;
  }
  /* One line of chips' room before the first pass; the row of a decoder's tokens, which
     grows a chip per generated token, holds three lines from the start (the default prompt
     and its 32 tokens on a phone), so that a new line of chips moves nothing below it. */
  .chips {
    display: flex;
    flex-wrap: wrap;
    align-content: flex-start;
    min-height: 1.45rem;
    gap: 2px;
    max-height: 132px;
    overflow: hidden;
  }
  .chips.grows {
    min-height: 74px;
  }
  .chip {
    font-family: var(--tp-mono);
    font-size: 0.85rem;
    line-height: 1.15;
    padding: 2px 4px;
    border-radius: 3px;
    background: var(--tp-bg);
    border: 1px solid var(--tp-line);
    white-space: pre;
  }
  .chip.new {
    border-color: var(--tp-focus);
    color: var(--tp-focus);
    font-weight: 700;
    animation: pop 0.5s ease-out;
  }
  @keyframes pop {
    from {
      transform: scale(1.5);
    }
    to {
      transform: none;
    }
  }
  .ffn-axis {
    display: block;
    text-align: center;
    font-family: var(--tp-mono);
    font-size: 0.68rem;
    line-height: 1.2;
  }
  .bars {
    display: grid;
    grid-template-columns: max-content 1fr max-content;
    grid-auto-rows: 1.3em;
    align-content: start;
    gap: 2px 5px;
    align-items: center;
    font-size: 0.72rem;
  }
  .bars .tok {
    font-family: var(--tp-mono);
    white-space: pre;
    text-align: right;
    max-width: 7em;
    overflow: hidden;
    text-overflow: ellipsis;
  }
  .bars .track {
    height: 9px;
    border-radius: 2px;
    background: rgba(128, 128, 128, 0.15);
    position: relative;
    min-width: 30px;
  }
  .bars .fill {
    position: absolute;
    inset: 0 auto 0 0;
    border-radius: 2px;
  }
  .bars .num {
    font-family: var(--tp-mono);
    text-align: right;
  }
  .big {
    display: block;
    font-family: var(--tp-mono);
    font-size: 1.6rem;
    font-weight: 700;
    text-align: center;
    padding: 6px 0;
    border-radius: 6px;
    border: 2px solid var(--tp-focus);
    background: var(--tp-bg);
    white-space: pre;
  }
  .tags {
    display: flex;
    flex-wrap: wrap;
    gap: 2px;
  }
  .tags span {
    display: flex;
    flex-direction: column;
    align-items: center;
    font-family: var(--tp-mono);
    font-size: 0.68rem;
    border: 1px solid var(--tp-line);
    border-radius: 3px;
    padding: 0 2px;
  }
  .tags b {
    color: var(--tp-accent);
  }
  .legend {
    margin: 8px 0 0;
    font-size: 0.75rem;
    color: var(--tp-muted);
  }
  .loop {
    display: block;
    margin-top: 4px;
    font-size: 0.7rem;
    color: var(--tp-focus);
  }
  /* A middling panel (a 1024 px window): narrower cards, so that the decoder's last add and
     the output stay beside each other instead of overlapping. */
  @container (max-width: 1180px) {
    .arrow {
      flex-basis: 14px;
    }
    .block .arrow {
      flex-basis: 8px;
    }
    .stage.io {
      width: 92px;
    }
    .stage.attn {
      width: 124px;
      --ov-head: 48px;
    }
    .stage.ffn {
      width: 104px;
      --ov-ffn-w: 86px;
    }
    .stage.out {
      width: 150px;
    }
    .stage.next {
      width: 96px;
    }
    .stage.memory {
      width: 96px;
    }
  }
  /* A narrow panel (a phone): the flow runs top to bottom. */
  @container (max-width: 760px) {
    .flow,
    .block,
    .unit {
      flex-direction: column;
      align-items: stretch;
    }
    .arrow {
      flex-basis: auto;
      padding: 2px 0;
    }
    .arrow::before {
      content: '↓';
    }
    .stage,
    .stage.io,
    .stage.attn,
    .stage.ffn,
    .stage.out,
    .stage.next,
    .stage.memory {
      width: auto;
    }
    .stage.pill,
    .stage.pill.add {
      width: auto;
      height: auto;
      align-self: stretch;
      padding: 3px 8px;
      flex-direction: row;
    }
    .stage.pill .t {
      writing-mode: horizontal-tb;
      transform: none;
    }
    .unit {
      padding-top: 0;
      padding-left: 12px;
    }
    .unit.res::before {
      top: 4px;
      bottom: 14px;
      left: 3px;
      right: auto;
      width: 8px;
      height: auto;
      border: 1.5px solid var(--tp-accent);
      border-right: 0;
      border-radius: 8px 0 0 8px;
    }
    .stage.attn .pic {
      align-self: flex-start;
    }
    /* The FFN's units across the card's width. */
    .stage.ffn {
      --ov-ffn-w: 100%;
    }
  }
`;
