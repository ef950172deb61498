// <tp-view-menu>: the one "⋯" menu in the title row of every view of the playground, with
// what can be done with the view as a whole: save it as an SVG or PNG picture, copy a link
// to it with the settings as they are, embed it in a post (the snippet and its preview). It draws no view of its own and knows nothing of
// them: choosing an entry sends `tp-view-action` (detail: { action, reply }), and the
// playground answers through `reply(text)` with what to say ("Link copied.").
//
// The menu-button pattern of WAI-ARIA: Enter, Space or ↓ open the menu on its first
// entry (↑ on its last); ↑ ↓ Home End move; Enter or Space choose; Escape closes and gives
// the focus back to the button; Tab closes and moves on; a click elsewhere closes.

import { html, css } from 'lit';
import { msg, str } from '@lit/localize';
import { LocalizedElement } from '../i18n/locale';
import { panel } from '../ui/shared';

/** What the menu offers, in its order. */
export const VIEW_ACTIONS = ['svg', 'png', 'projector', 'link', 'embed'] as const;
export type ViewAction = (typeof VIEW_ACTIONS)[number];

export interface ViewActionDetail {
  action: ViewAction;
  /** What the action came to, shown beside the button ('' says nothing). */
  reply: (text: string) => void;
}

function actionLabel(a: ViewAction): string {
  if (a === 'svg') return msg('Save as SVG', { id: 'menu.svg' });
  if (a === 'png') return msg('Save as PNG', { id: 'menu.png' });
  if (a === 'projector') return msg('Show on a projector', { id: 'menu.projector' });
  if (a === 'embed') return msg('Embed in a post', { id: 'menu.embed' });
  return msg('Copy link', { id: 'menu.link' });
}

export class TpViewMenu extends LocalizedElement {
  static properties = {
    heading: { type: String },
    open: { state: true },
    said: { state: true },
  };

  /** The view's title, for the button's name ("Attention: pictures and link"). */
  heading = '';
  open = false;
  /** What the last action said. */
  said = '';
  private saidTimer: ReturnType<typeof setTimeout> | undefined;

  static styles = [
    panel,
    css`
      :host {
        position: absolute;
        top: var(--tp-space-2);
        right: var(--tp-space-2);
        z-index: 3;
        display: block;
      }
      .trigger {
        display: block;
        width: 2rem;
        height: 1.75rem;
        padding: 0;
        line-height: 1;
        font-size: var(--tp-text-lg);
        color: var(--tp-muted);
        border-color: transparent;
        background: transparent;
      }
      .trigger:hover,
      .trigger[aria-expanded='true'] {
        color: var(--tp-fg);
        border-color: var(--tp-line);
        background: var(--tp-bg);
      }
      [role='menu'] {
        position: absolute;
        top: calc(100% + var(--tp-space-1));
        right: 0;
        min-width: 11rem;
        display: flex;
        flex-direction: column;
        padding: var(--tp-space-1);
        background: var(--tp-bg);
        border: 1px solid var(--tp-line);
        border-radius: var(--tp-radius-sm);
        box-shadow: var(--tp-shadow);
      }
      [role='menu'][hidden] {
        display: none;
      }
      [role='menuitem'] {
        text-align: start;
        border: 0;
        border-radius: var(--tp-radius-sm);
        padding: var(--tp-space-1) var(--tp-space-3);
        font-size: var(--tp-text-sm);
        white-space: nowrap;
      }
      [role='menuitem']:hover,
      [role='menuitem']:focus-visible {
        background: var(--tp-accent-soft);
      }
      .said {
        position: absolute;
        top: calc(100% + var(--tp-space-1));
        right: 0;
        width: max-content;
        max-width: min(22rem, 80vw);
        padding: var(--tp-space-1) var(--tp-space-2);
        font-size: var(--tp-text-xs);
        background: var(--tp-bg);
        border: 1px solid var(--tp-line);
        border-radius: var(--tp-radius-sm);
        box-shadow: var(--tp-shadow);
        overflow-wrap: anywhere;
        user-select: all;
      }
      /* Empty, the live region stays (so what it says next is announced) but draws nothing. */
      .said.none {
        padding: 0;
        border: 0;
        box-shadow: none;
      }
      .said[hidden] {
        display: none;
      }
    `,
  ];

  private get items(): HTMLElement[] {
    return Array.from(this.renderRoot.querySelectorAll<HTMLElement>('[role="menuitem"]'));
  }

  private get trigger(): HTMLElement | null {
    return this.renderRoot.querySelector<HTMLElement>('.trigger');
  }

  /** A press outside the menu closes it. */
  private readonly outside = (e: Event) => {
    if (!e.composedPath().includes(this)) this.close(false);
  };

  connectedCallback(): void {
    super.connectedCallback();
    document.addEventListener('pointerdown', this.outside, true);
  }

  disconnectedCallback(): void {
    document.removeEventListener('pointerdown', this.outside, true);
    clearTimeout(this.saidTimer);
    super.disconnectedCallback();
  }

  private async show(focus: 'first' | 'last') {
    this.open = true;
    this.say('');
    await this.updateComplete;
    const items = this.items;
    (focus === 'first' ? items[0] : items[items.length - 1])?.focus();
  }

  private close(refocus: boolean) {
    if (!this.open) return;
    this.open = false;
    if (refocus) this.trigger?.focus();
  }

  private say(text: string) {
    clearTimeout(this.saidTimer);
    this.said = text;
    // A short answer goes after a while; a link to copy by hand stays until the menu opens again.
    if (text && !/^[a-z]+:\/\//.test(text)) this.saidTimer = setTimeout(() => (this.said = ''), 6000);
  }

  private onTriggerKey(e: KeyboardEvent) {
    if (e.key === 'ArrowDown' || e.key === 'Enter' || e.key === ' ') {
      e.preventDefault();
      void this.show('first');
    } else if (e.key === 'ArrowUp') {
      e.preventDefault();
      void this.show('last');
    } else if (e.key === 'Escape') {
      this.say('');
    }
  }

  private onMenuKey(e: KeyboardEvent) {
    const items = this.items;
    const at = items.indexOf(this.shadowRoot?.activeElement as HTMLElement);
    const go = (i: number) => items[(i + items.length) % items.length]?.focus();
    if (e.key === 'ArrowDown') go(at + 1);
    else if (e.key === 'ArrowUp') go(at - 1);
    else if (e.key === 'Home') go(0);
    else if (e.key === 'End') go(items.length - 1);
    else if (e.key === 'Escape') this.close(true);
    else if (e.key === 'Tab') {
      this.close(false);
      return;
    } else return;
    e.preventDefault();
    e.stopPropagation();
  }

  private choose(action: ViewAction) {
    this.close(true);
    const detail: ViewActionDetail = { action, reply: (t) => this.say(t) };
    this.dispatchEvent(new CustomEvent<ViewActionDetail>('tp-view-action', { detail, bubbles: true, composed: true }));
  }

  render() {
    return html`<button
        class="trigger"
        aria-haspopup="menu"
        aria-expanded=${this.open ? 'true' : 'false'}
        aria-controls="menu"
        aria-label=${msg(str`${this.heading}: pictures and link`, { id: 'menu.button' })}
        title=${msg('Save as a picture, copy a link', { id: 'menu.tooltip' })}
        @click=${() => (this.open ? this.close(true) : void this.show('first'))}
        @keydown=${this.onTriggerKey}
      >
        <span aria-hidden="true">⋯</span>
      </button>
      <div id="menu" role="menu" aria-label=${this.heading} ?hidden=${!this.open} @keydown=${this.onMenuKey}>
        ${VIEW_ACTIONS.map(
          (a) => html`<button role="menuitem" tabindex="-1" data-action=${a} @click=${() => this.choose(a)}>${actionLabel(a)}</button>`,
        )}
      </div>
      <span class="said ${this.said ? '' : 'none'}" role="status" ?hidden=${this.open}>${this.said}</span>`;
  }
}

customElements.define('tp-view-menu', TpViewMenu);
