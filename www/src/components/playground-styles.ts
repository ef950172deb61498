// The styles of <transformer-playground> itself (./transformer-playground.ts): its bar,
// frames, notes and the projector overlay; each view styles its own shadow root.

import { css } from 'lit';
import { chapterStyles } from './tp-chapters';
import { panel, theme } from '../ui/shared';

export const playgroundStyles = [
  theme,
  panel,
  chapterStyles,
  css`
    .bar {
      display: flex;
      gap: var(--tp-space-3);
      align-items: center;
      justify-content: flex-end;
      flex-wrap: wrap;
      font-size: var(--tp-text-md);
      color: var(--tp-muted);
    }
    .bar .hint {
      margin-right: auto;
    }
    .layout {
      position: relative;
      display: grid;
      grid-template-columns: minmax(0, 1fr) minmax(0, 1fr);
      gap: var(--tp-space-3);
    }
    /* In an open chapter's long column, while a generation plays, a view far off screen
       is not laid out or painted again for every token: it keeps the size it last had
       (remembered from before the playback), so nothing moves. */
    .chapter-head ~ .view {
      contain-intrinsic-size: auto 300px auto 400px;
    }
    .chapter-head ~ .view[data-playing] {
      content-visibility: auto;
    }
    .wide,
    .view:has(> .wide) {
      grid-column: 1 / -1;
    }
    .view {
      min-width: 0;
      position: relative;
      /* Room at the end of the view's title row for its menu (tp-view-menu). */
      --tp-menu-room: 2.25rem;
    }
    /* The progress of a slow step floats over the top of the views: appearing and going,
       it moves nothing on the page. */
    tp-progress.overlay {
      position: absolute;
      top: 0;
      left: 0;
      right: 0;
      z-index: 4;
      margin: 0;
      padding: var(--tp-space-2) var(--tp-space-3);
      background: var(--tp-bg);
      border: 1px solid var(--tp-line);
      border-radius: var(--tp-radius);
      box-shadow: var(--tp-shadow);
    }
    /* Before the engine's first answer: the room the view will take (../views/reserve.ts). */
    .view[data-waiting] {
      min-height: var(--tp-reserve-wide, 0);
    }
    /* A view whose code has not arrived yet (../views/load.ts): an empty card of its room. */
    .view > :not(:defined) {
      display: block;
      box-sizing: border-box;
      min-height: inherit;
      background: var(--tp-bg);
      border: 1px solid var(--tp-line);
      border-radius: var(--tp-radius);
    }
    .view:has(> tp-saturation, > tp-cost, > tp-schedule) {
      align-self: start;
    }
    .layout.single {
      grid-template-columns: minmax(0, 1fr);
    }
    @media (max-width: 900px) {
      .layout {
        grid-template-columns: minmax(0, 1fr);
      }
      .view[data-waiting] {
        min-height: var(--tp-reserve-narrow, 0);
      }
    }
    .notes {
      border: 1px solid var(--tp-warn);
      background: var(--tp-warn-soft);
      color: var(--tp-fg);
      border-radius: 8px;
      padding: 6px 10px;
      font-size: var(--tp-text-md);
    }
    .notes ul {
      margin: var(--tp-space-1) 0 0;
      padding-left: 1.2em;
    }
    .notes button {
      float: right;
    }
    /* A view on a projector: alone over the whole screen, in large type; the class link and
       its QR code in the corner. */
    .projector {
      position: fixed;
      inset: 0;
      z-index: 50;
      display: grid;
      grid-template-columns: minmax(0, 1fr) auto;
      gap: var(--tp-space-3);
      padding: var(--tp-space-3);
      background: var(--tp-bg);
      color: var(--tp-fg);
      overflow: auto;
    }
    .projector-stage {
      min-width: 0;
    }
    .projector-side {
      display: flex;
      flex-direction: column;
      justify-content: space-between;
      align-items: flex-end;
      gap: var(--tp-space-3);
      position: sticky;
      top: 0;
      height: calc(100vh - 2 * var(--tp-space-3));
    }
    .error {
      border: 2px solid var(--tp-error);
      border-radius: 8px;
      padding: var(--tp-space-2) var(--tp-space-3);
    }
  `,
];
