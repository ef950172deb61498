// The one sentence of a view whose experiment is defined only for the shipped models (they
// were trained for it: the same model with and without position encodings, the grammar
// models at one training length) when the page runs another model (a loaded folder, a
// lab run): the view goes on with the shipped models and says so.

import { msg, str } from '@lit/localize';

export function shippedOnly(model: string): string {
  return msg(str`This experiment is defined for the shipped models, trained for it; it runs on them, not on ${model}.`, { id: 'view.shipped-only' });
}
