// Names of the model's parts that several views print, in the page's language.

import { msg } from '@lit/localize';

/** An architecture (`ModelInfo.arch`) in words, lower case as inside a sentence. */
export function archName(arch: string): string {
  switch (arch) {
    case 'decoder_only':
      return msg('decoder-only');
    case 'encoder_decoder':
      return msg('encoder-decoder');
    case 'encoder_only':
      return msg('encoder-only');
    default:
      return arch.replace('_', '-');
  }
}
