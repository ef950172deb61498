// Load a view's code when the view first comes into sight: `${loadWhenSeen(() =>
// import('…'))}` on an element whose tag that module defines. The element waits,
// undefined, until then (its properties are kept and applied when it upgrades), so a
// large view costs the first load nothing.

import { nothing } from 'lit';
import { Directive, directive, PartType, type ElementPart, type PartInfo } from 'lit/directive.js';
import { whenSeen } from './shared';

class LoadWhenSeen extends Directive {
  private started = false;

  constructor(info: PartInfo) {
    super(info);
    if (info.type !== PartType.ELEMENT) throw new Error('loadWhenSeen() belongs on an element');
  }

  render(_load: () => Promise<unknown>) {
    return nothing;
  }

  update(part: ElementPart, [load]: [() => Promise<unknown>]) {
    if (!this.started) {
      this.started = true;
      whenSeen(part.element, () => void load());
    }
    return nothing;
  }
}

export const loadWhenSeen = directive(LoadWhenSeen);
