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

/** A row of the core's cost report (`crate/src/model/cost.rs`: group and part names), in words. */
export function costName(name: string): string {
  switch (name) {
    case 'embeddings':
      return msg('embeddings');
    case 'encoder layer':
      return msg('encoder layer');
    case 'decoder layer':
      return msg('decoder layer');
    case 'head':
      return msg('output head');
    case 'token embedding (a lookup)':
      return msg('token embedding (a lookup)');
    case 'source embedding (a lookup)':
      return msg('source embedding (a lookup)');
    case 'target embedding (a lookup)':
      return msg('target embedding (a lookup)');
    case 'learned positions (a lookup)':
      return msg('learned positions (a lookup)');
    case 'Q projection':
      return msg('Q projection');
    case 'K projection':
      return msg('K projection');
    case 'V projection':
      return msg('V projection');
    case 'O projection':
      return msg('O projection');
    case 'scores + mix':
      return msg('scores + mix');
    case 'cross Q projection':
      return msg('cross Q projection');
    case 'cross K projection':
      return msg('cross K projection');
    case 'cross V projection':
      return msg('cross V projection');
    case 'cross O projection':
      return msg('cross O projection');
    case 'cross scores + mix':
      return msg('cross scores + mix');
    case 'FFN':
      return msg('FFN');
    case 'norms (not counted: O(C))':
      return msg('norms (not counted: O(C))');
    case "encoder's final norm":
      return msg("encoder's final norm");
    case "decoder's final norm":
      return msg("decoder's final norm");
    case 'LM head':
      return msg('LM head');
    case 'LM head (tied to the embedding)':
      return msg('LM head (tied to the embedding)');
    case 'classifier':
      return msg('classifier');
    default:
      return name;
  }
}

/** A stack of the model (`encoder`, `decoder`), in words. */
export function stackName(name: string): string {
  return name === 'encoder' ? msg('encoder') : name === 'decoder' ? msg('decoder') : name;
}
